package cliflag

import (
	"errors"
	"flag"
	"strings"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/secret"
)

// Webhooks are the flags that set webhooks (corral agents, corral
// serve): the endpoints, the file their secret is read from (never argv),
// and the events they receive.
type Webhooks struct {
	urls       StringList
	secretFile *string
	events     *string
}

// AddWebhooks defines --webhook, --webhook-secret-file and --webhook-events
// on fs; whose names the executions in their help.
func AddWebhooks(fs *flag.FlagSet, whose string) *Webhooks {
	f := &Webhooks{}
	fs.Var(&f.urls, "webhook", "an http(s) `URL` that receives a signed POST per event of "+whose+" executions (repeatable; docs/observability.md)")
	f.secretFile = fs.String("webhook-secret-file", "", "the `FILE` (private to its owner, or /dev/fd/N) holding the secret that signs the --webhook deliveries")
	f.events = fs.String("webhook-events", "", "comma-separated `EVENTS` the --webhook endpoints receive (default all: "+strings.Join(corral.WebhookEvents, ", ")+")")
	return f
}

// Hooks returns the webhooks the flags describe, nil for none given; an
// error for a URL that is not http(s), a secret file that cannot be read
// or is open to others, or a secret file or events without a URL.
func (f *Webhooks) Hooks() ([]corral.Webhook, error) {
	if len(f.urls) == 0 {
		if *f.secretFile != "" || *f.events != "" {
			return nil, errors.New("--webhook-secret-file and --webhook-events go with --webhook")
		}
		return nil, nil
	}
	if *f.secretFile == "" {
		return nil, errors.New("--webhook needs --webhook-secret-file: the deliveries are signed with its secret")
	}
	sec, err := secret.FromFile(*f.secretFile)
	if err != nil {
		return nil, err
	}
	var events []string
	for _, e := range strings.Split(*f.events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			events = append(events, e)
		}
	}
	out := make([]corral.Webhook, 0, len(f.urls))
	for _, u := range f.urls {
		if err := corral.ValidWebhookURL(u); err != nil {
			return nil, err
		}
		out = append(out, corral.Webhook{URL: u, Secret: sec, Events: events})
	}
	return out, nil
}
