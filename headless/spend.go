package headless

import (
	"fmt"
	"slices"
	"strings"

	"github.com/corralrun/corral/internal/mutant"
)

// Spend is what a turn has spent so far: its cost and its tokens, counted
// after every stream event that carries usage (Claude Code's assistant
// messages and result, Codex's turn.completed).
type Spend struct {
	// CostUSD is the agent's own figure when it reported one (Claude
	// Code's total_cost_usd: CostReported), else the price table's
	// estimate from the usage. CostKnown is false when a model of the
	// turn has no price (UnpricedModel names it): the cost is then a floor,
	// and a cost ceiling cannot hold; token ceilings still do.
	CostUSD       float64 `json:"cost_usd"`
	CostReported  bool    `json:"cost_reported,omitempty"`
	CostKnown     bool    `json:"cost_known"`
	UnpricedModel string  `json:"unpriced_model,omitempty"`
	// Tokens counts every token read or written (Usage.Tokens).
	Tokens int64 `json:"tokens"`
	Usage  Usage `json:"usage"`
	// Models are the models that answered, in order of first use.
	Models []string `json:"models,omitempty"`
}

// msgSpend is the usage of one assistant message (it may span lines).
type msgSpend struct {
	model string
	usage Usage
}

// spendState is what the state keeps to count a turn's spend.
type spendState struct {
	msgs     map[string]msgSpend
	anon     Usage // usage of messages without an id, summed
	anonCost float64
	models   []string
	unpriced string
	why      string // why a ceiling ended the turn
}

// note folds a line's usage into the count.
func (sp *spendState) note(in *lineInfo, prices *Prices, f Format) {
	if in.usage == nil || f == FormatCodex {
		return
	}
	if in.usageModel != "" && !slices.Contains(sp.models, in.usageModel) {
		sp.models = append(sp.models, in.usageModel)
	}
	if in.usageID == "" {
		sp.anon = addUsage(sp.anon, *in.usage)
		sp.anonCost += sp.price(prices, in.usageModel, *in.usage, f)
		return
	}
	if sp.msgs == nil {
		sp.msgs = map[string]msgSpend{}
	}
	sp.msgs[in.usageID] = msgSpend{model: in.usageModel, usage: *in.usage}
}

// price is what u of model costs, noting a model without a price.
func (sp *spendState) price(prices *Prices, model string, u Usage, f Format) float64 {
	p, ok := prices.Lookup(model)
	if !ok {
		if sp.unpriced == "" {
			sp.unpriced = model
			if model == "" {
				sp.unpriced = "(unnamed)"
			}
		}
		return 0
	}
	return p.Cost(u, f)
}

// spend returns the turn's spend so far. A Codex turn's usage is its
// turn.completed's; a Claude Code turn's, its messages' until its result
// reports the cost. before is what the session had spent before this
// turn when it resumes one (its CLI reports some figures from the
// session's start): it is taken off.
func (t *Turn) spend() Spend {
	s := &t.st
	sp := &s.spend
	prices := t.spec.Prices
	if prices == nil {
		prices = DefaultPrices()
	}
	out := Spend{Models: slices.Clone(sp.models)}
	var estimate float64
	if s.format == FormatCodex {
		if s.usage != nil {
			out.Usage = *s.usage
			if b := t.spec.Before; b != nil {
				out.Usage = subUsage(out.Usage, b.Usage)
			}
			model := codexModel(t.spec.Args)
			if model != "" {
				out.Models = []string{model}
			}
			estimate = sp.price(prices, model, out.Usage, s.format)
		}
	} else {
		out.Usage, estimate = sp.anon, sp.anonCost
		for _, m := range sp.msgs {
			out.Usage = addUsage(out.Usage, m.usage)
			estimate += sp.price(prices, m.model, m.usage, s.format)
		}
	}
	out.Tokens = out.Usage.Tokens(s.format)
	out.UnpricedModel = sp.unpriced
	out.CostUSD, out.CostKnown = estimate, sp.unpriced == ""
	if s.hasCost {
		out.CostUSD, out.CostReported, out.CostKnown = s.cost, true, true
		if b := t.spec.Before; b != nil && b.CostReported {
			out.CostUSD = max(out.CostUSD-b.CostUSD, 0)
		}
	}
	return out
}

// overCeiling says why sp crosses a ceiling of the spec, "" when it does
// not.
func (t *Turn) overCeiling(sp Spend) string {
	if mutant.NoCeiling {
		return ""
	}
	if m := t.spec.MaxTokens; m > 0 && sp.Tokens > m {
		return fmt.Sprintf("the turn used %d tokens, over its ceiling of %d", sp.Tokens, m)
	}
	if m := t.spec.MaxCostUSD; m > 0 && sp.CostUSD > m {
		how := "reported"
		if !sp.CostReported {
			how = "estimated from the price table"
		}
		return fmt.Sprintf("the turn spent $%.4f (%s), over its ceiling of $%.4f", sp.CostUSD, how, m)
	}
	return ""
}

func addUsage(a, b Usage) Usage {
	return Usage{
		InputTokens:              a.InputTokens + b.InputTokens,
		OutputTokens:             a.OutputTokens + b.OutputTokens,
		CacheCreationInputTokens: a.CacheCreationInputTokens + b.CacheCreationInputTokens,
		CacheReadInputTokens:     a.CacheReadInputTokens + b.CacheReadInputTokens,
		CachedInputTokens:        a.CachedInputTokens + b.CachedInputTokens,
		CacheWriteInputTokens:    a.CacheWriteInputTokens + b.CacheWriteInputTokens,
		ReasoningOutputTokens:    a.ReasoningOutputTokens + b.ReasoningOutputTokens,
	}
}

func subUsage(a, b Usage) Usage {
	d := func(x, y int64) int64 { return max(x-y, 0) }
	return Usage{
		InputTokens:              d(a.InputTokens, b.InputTokens),
		OutputTokens:             d(a.OutputTokens, b.OutputTokens),
		CacheCreationInputTokens: d(a.CacheCreationInputTokens, b.CacheCreationInputTokens),
		CacheReadInputTokens:     d(a.CacheReadInputTokens, b.CacheReadInputTokens),
		CachedInputTokens:        d(a.CachedInputTokens, b.CachedInputTokens),
		CacheWriteInputTokens:    d(a.CacheWriteInputTokens, b.CacheWriteInputTokens),
		ReasoningOutputTokens:    d(a.ReasoningOutputTokens, b.ReasoningOutputTokens),
	}
}

// codexModel reads the model a codex command line asks for: -m M,
// --model M, --model=M or -c model=M (a TOML string, quoted or not).
func codexModel(args []string) string {
	model := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-m" || a == "--model") && i+1 < len(args):
			model = args[i+1]
			i++
		case strings.HasPrefix(a, "--model="):
			model = a[len("--model="):]
		case a == "-c" && i+1 < len(args):
			if v, ok := strings.CutPrefix(args[i+1], "model="); ok {
				model = trimQuotes(v)
			}
			i++
		case a == "--":
			return model
		}
	}
	return model
}

func trimQuotes(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// same reports whether sp counts what o counts (nil o counts nothing).
func (sp *Spend) same(o *Spend) bool {
	return o != nil && sp.CostUSD == o.CostUSD && sp.Tokens == o.Tokens && sp.CostReported == o.CostReported
}
