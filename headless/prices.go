package headless

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"sort"
	"strings"
	"sync"
)

// Price is what a model's tokens cost, in USD per million.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write,omitempty"`
	CacheRead  float64 `json:"cache_read,omitempty"`
}

// Prices is a price table: what each model's tokens cost, with the date
// and the source of the figures. A model is found by its name or, failing
// that, by the longest name in the table that its name begins with
// ("claude-sonnet-4-5-20250929" is priced as "claude-sonnet-4-5").
type Prices struct {
	Date   string           `json:"date"`
	Source string           `json:"source"`
	Models map[string]Price `json:"models"`
}

//go:embed prices/prices.json
var defaultPricesJSON []byte

var defaultPrices = sync.OnceValue(func() *Prices {
	p, err := parsePrices(defaultPricesJSON)
	if err != nil {
		panic("headless: the price table shipped with corral does not parse: " + err.Error())
	}
	return p
})

// DefaultPrices returns the price table shipped with corral (its Date and
// Source say where its figures come from). Do not change it.
func DefaultPrices() *Prices { return defaultPrices() }

// LoadPrices reads a price table file of the shape of the one shipped
// (a JSON object: date, source, models: NAME: {input, output,
// cache_write, cache_read}) and returns the shipped table with the
// file's models added or replacing theirs. The error says what is wrong.
func LoadPrices(path string) (*Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	over, err := parsePrices(b)
	if err != nil {
		return nil, fmt.Errorf("prices %s: %w", path, err)
	}
	p := &Prices{Date: over.Date, Source: over.Source, Models: maps.Clone(DefaultPrices().Models)}
	if p.Date == "" {
		p.Date = DefaultPrices().Date
	}
	if p.Source == "" {
		p.Source = path
	}
	maps.Copy(p.Models, over.Models)
	return p, nil
}

func parsePrices(b []byte) (*Prices, error) {
	var p Prices
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("want {\"date\", \"source\", \"models\": {NAME: {\"input\", \"output\", \"cache_write\", \"cache_read\"}}} in USD per million tokens: %v", err)
	}
	if len(p.Models) == 0 {
		return nil, fmt.Errorf("no models")
	}
	for name, m := range p.Models {
		if name == "" {
			return nil, fmt.Errorf("a model without a name")
		}
		if m.Input < 0 || m.Output < 0 || m.CacheWrite < 0 || m.CacheRead < 0 {
			return nil, fmt.Errorf("model %s: a price cannot be negative", name)
		}
		if m.Input == 0 && m.Output == 0 {
			return nil, fmt.Errorf("model %s: no input or output price", name)
		}
	}
	return &p, nil
}

// Lookup returns the price of model, and whether the table has one.
func (p *Prices) Lookup(model string) (Price, bool) {
	if p == nil || model == "" {
		return Price{}, false
	}
	if m, ok := p.Models[model]; ok {
		return m, true
	}
	names := make([]string, 0, len(p.Models))
	for n := range p.Models {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		if strings.HasPrefix(model, n) {
			return p.Models[n], true
		}
	}
	return Price{}, false
}

// Cost returns what u cost at price m, as the format of the stream counts
// its tokens: Claude Code's input excludes the cache reads and writes it
// lists beside it; Codex's (OpenAI's) input includes its cached tokens.
func (m Price) Cost(u Usage, f Format) float64 {
	per := func(n int64, usd float64) float64 { return float64(n) * usd / 1e6 }
	if f == FormatCodex {
		fresh := max(u.InputTokens-u.CachedInputTokens, 0)
		return per(fresh, m.Input) + per(u.CachedInputTokens, m.CacheRead) + per(u.OutputTokens, m.Output)
	}
	return per(u.InputTokens, m.Input) + per(u.CacheCreationInputTokens, m.CacheWrite) +
		per(u.CacheReadInputTokens, m.CacheRead) + per(u.OutputTokens, m.Output)
}

// Tokens counts u's tokens as a token ceiling counts them: every token
// read or written, cache reads and writes included.
func (u Usage) Tokens(f Format) int64 {
	if f == FormatCodex {
		return u.InputTokens + u.OutputTokens
	}
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
}
