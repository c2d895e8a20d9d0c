package api_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// openapiPath is the document the conformance test holds the server to.
const openapiPath = "../docs/openapi.yaml"

// apiDoc is docs/openapi.yaml, parsed, with what the probe saw of it.
type apiDoc struct {
	root map[string]any
	// ops maps "METHOD /path/{param}" to the operation object.
	ops map[string]map[string]any
	// opIDs maps an operationId to its "METHOD /path" key.
	opIDs map[string]string
	// seenResp and seenReq record the properties of the document's
	// schemas that some answer, or some request, carried, keyed by the
	// schema's pointer, then the property; validate records into cur.
	seenResp, seenReq, cur map[string]map[string]bool
	// hit records the operations the probe called.
	hit map[string]bool
}

func loadDoc(t *testing.T) *apiDoc {
	t.Helper()
	b, err := os.ReadFile(openapiPath)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatalf("%s is not YAML: %v", openapiPath, err)
	}
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("%s: openapi %q, want 3.1.x", openapiPath, v)
	}
	d := &apiDoc{root: root, ops: map[string]map[string]any{}, opIDs: map[string]string{}, seenResp: map[string]map[string]bool{}, seenReq: map[string]map[string]bool{}, hit: map[string]bool{}}
	paths, _ := root["paths"].(map[string]any)
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			if m == "parameters" {
				continue
			}
			key := strings.ToUpper(m) + " " + p
			o := op.(map[string]any)
			d.ops[key] = o
			id, _ := o["operationId"].(string)
			if id == "" {
				t.Errorf("%s: no operationId", key)
			}
			if prev, dup := d.opIDs[id]; dup {
				t.Errorf("operationId %s is used by %s and %s", id, prev, key)
			}
			d.opIDs[id] = key
		}
	}
	return d
}

// resolve follows a local $ref.
func (d *apiDoc) resolve(ref string) (map[string]any, bool) {
	var cur any = d.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// deref returns s with $ref followed (and the pointer it names).
func (d *apiDoc) deref(s map[string]any, ptr string) (map[string]any, string) {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, ptr
		}
		r, ok := d.resolve(ref)
		if !ok {
			return map[string]any{"x-broken-ref": ref}, ref
		}
		s, ptr = r, ref
	}
}

// schemaKeywords are the keywords the validator understands or may
// ignore: the document uses no other, so that nothing it says goes
// unchecked.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "$ref": true, "enum": true, "format": true, "minimum": true, "maximum": true,
	"description": true, "example": true, "default": true, "title": true,
}

// validate checks v against schema s (pointer ptr), records the
// properties seen, and returns what does not match.
func (d *apiDoc) validate(s map[string]any, ptr string, v any, at string) []string {
	s, ptr = d.deref(s, ptr)
	if ref, bad := s["x-broken-ref"]; bad {
		return []string{fmt.Sprintf("%s: unresolvable $ref %v", at, ref)}
	}
	var errs []string
	for k := range s {
		if !schemaKeywords[k] && !strings.HasPrefix(k, "x-") {
			errs = append(errs, fmt.Sprintf("%s: schema %s uses %q, which the conformance test does not check", at, ptr, k))
		}
	}
	if !typeMatches(s["type"], v) {
		return append(errs, fmt.Sprintf("%s: %s is not of type %v (schema %s)", at, short(v), s["type"], ptr))
	}
	if enum, ok := s["enum"].([]any); ok && v != nil && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		errs = append(errs, fmt.Sprintf("%s: %s is not one of %v", at, short(v), enum))
	}
	if f, _ := s["format"].(string); f == "date-time" {
		if str, ok := v.(string); ok {
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %q is not an RFC 3339 time", at, str))
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		errs = append(errs, d.validateObject(s, ptr, v, at)...)
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range v {
				errs = append(errs, d.validate(items, ptr+"/items", it, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func (d *apiDoc) validateObject(s map[string]any, ptr string, v map[string]any, at string) []string {
	var errs []string
	props, _ := s["properties"].(map[string]any)
	for _, r := range asList(s["required"]) {
		if _, ok := v[r]; !ok {
			errs = append(errs, fmt.Sprintf("%s: required field %q missing (schema %s)", at, r, ptr))
		}
	}
	for k, val := range v {
		if ps, ok := props[k].(map[string]any); ok {
			if d.cur[ptr] == nil {
				d.cur[ptr] = map[string]bool{}
			}
			d.cur[ptr][k] = true
			errs = append(errs, d.validate(ps, ptr+"/properties/"+k, val, at+"."+k)...)
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				errs = append(errs, fmt.Sprintf("%s: field %q is not in the document (schema %s)", at, k, ptr))
			}
		case map[string]any:
			errs = append(errs, d.validate(ap, ptr+"/additionalProperties", val, at+"."+k)...)
		}
	}
	return errs
}

func typeMatches(want, v any) bool {
	if want == nil {
		return true
	}
	types := asList(want)
	for _, t := range types {
		switch t {
		case "null":
			if v == nil {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "number":
			if _, ok := v.(float64); ok {
				return true
			}
		case "integer":
			if f, ok := v.(float64); ok && f == math.Trunc(f) {
				return true
			}
		}
	}
	return false
}

func asList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = fmt.Sprint(e)
		}
		return out
	}
	return nil
}

func short(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// matchPath returns the documented "METHOD /template" that method and
// the concrete path (without query) fall under.
func (d *apiDoc) matchPath(method, path string) (string, bool) {
	segs := strings.Split(path, "/")
	for key := range d.ops {
		m, tmpl, _ := strings.Cut(key, " ")
		if m != method {
			continue
		}
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			if !(ts[i] == segs[i] || strings.HasPrefix(ts[i], "{") && segs[i] != "") {
				ok = false
				break
			}
		}
		if ok {
			return key, true
		}
	}
	return "", false
}

// responseSchemas returns the pointers of every schema an answer may
// carry (response bodies and event data), and requestSchemas those of
// request bodies.
func (d *apiDoc) bodySchemas() (responses, requests []string) {
	resp, req := map[string]bool{}, map[string]bool{}
	for _, op := range d.ops {
		if rb, ok := op["requestBody"].(map[string]any); ok {
			for _, c := range rb["content"].(map[string]any) {
				d.collect(c.(map[string]any)["schema"].(map[string]any), "", req)
			}
		}
		for _, r := range op["responses"].(map[string]any) {
			rm, _ := d.deref(r.(map[string]any), "")
			content, _ := rm["content"].(map[string]any)
			for _, c := range content {
				cm := c.(map[string]any)
				d.collect(cm["schema"].(map[string]any), "", resp)
				if evs, ok := cm["x-sse-events"].(map[string]any); ok {
					for _, s := range evs {
						d.collect(s.(map[string]any), "", resp)
					}
				}
			}
		}
	}
	return sortedKeys(resp), sortedKeys(req)
}

// collect adds the pointers of the object schemas under s to out.
func (d *apiDoc) collect(s map[string]any, ptr string, out map[string]bool) {
	s, ptr = d.deref(s, ptr)
	if ptr != "" && out[ptr] {
		return
	}
	if props, ok := s["properties"].(map[string]any); ok && ptr != "" {
		out[ptr] = true
		for k, p := range props {
			d.collect(p.(map[string]any), ptr+"/properties/"+k, out)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		d.collect(items, ptr+"/items", out)
	}
}

// unseenIn returns the documented properties of the schemas at ptrs
// that seen lacks, but for those whose x-unprobed says why not.
func (d *apiDoc) unseenIn(seen map[string]map[string]bool, ptrs []string, exempt map[string]string) []string {
	var out []string
	for _, ptr := range ptrs {
		s, _ := d.resolve(ptr)
		props, _ := s["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			p := props[k].(map[string]any)
			if _, why := p["x-unprobed"]; why || seen[ptr][k] || exempt[ptr+"/properties/"+k] != "" {
				continue
			}
			out = append(out, ptr+"/properties/"+k)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// registeredRoutes reads the routes the api package registers: the
// "METHOD /pattern" string given to every HandleFunc or Handle call of its
// (non-test) source. Patterns without a method (the catch-alls) are left
// out: they answer 404, or serve the web UI.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	fset := gotoken.NewFileSet()
	var routes []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != gotoken.STRING {
				t.Errorf("%s: a route registered with a pattern that is not a literal: the conformance test cannot read it", fset.Position(call.Pos()))
				return true
			}
			p, _ := strconv.Unquote(lit.Value)
			if strings.Contains(p, " ") {
				routes = append(routes, p)
			}
			return true
		})
	}
	sort.Strings(routes)
	return routes
}
