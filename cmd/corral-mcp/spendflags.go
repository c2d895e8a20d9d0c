package main

import (
	"errors"
	"flag"
	"math"

	"github.com/corralrun/corral/headless"
)

// spendFlags are corral headless's spending ceilings and price table.
type spendFlags struct {
	maxCost   *float64
	maxTokens *int64
	prices    *string
}

func addSpendFlags(fs *flag.FlagSet) *spendFlags {
	return &spendFlags{
		maxCost:   fs.Float64("max-cost-usd", 0, "end the turn as max_budget once its cost crosses `USD` (the agent's own figure, else estimated from the price table); 0: none"),
		maxTokens: fs.Int64("max-tokens", 0, "end the turn as max_budget once it has used more than `N` tokens (cache reads and writes included); 0: none"),
		prices:    fs.String("prices", "", "a price table `FILE` (JSON, the shape of the shipped one: docs/budgets.md) adding to or replacing the shipped prices"),
	}
}

// apply sets the ceilings and prices of spec; the error says what is
// wrong with the flags.
func (f *spendFlags) apply(spec *headless.Spec) error {
	if *f.maxCost < 0 || math.IsNaN(*f.maxCost) || math.IsInf(*f.maxCost, 0) {
		return errors.New("--max-cost-usd: want a number of dollars, 0 or more")
	}
	if *f.maxTokens < 0 {
		return errors.New("--max-tokens: want a number of tokens, 0 or more")
	}
	spec.MaxCostUSD, spec.MaxTokens = *f.maxCost, *f.maxTokens
	if *f.prices != "" {
		p, err := headless.LoadPrices(*f.prices)
		if err != nil {
			return err
		}
		spec.Prices = p
	}
	return nil
}
