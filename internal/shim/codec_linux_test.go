package shim

import (
	"reflect"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

// filled returns a Msg with every field set (see fill): a field added to
// Msg and forgotten by the codec fails TestMsgCarriesEveryField.
func filled(t *testing.T) Msg {
	var m Msg
	fill(t, reflect.ValueOf(&m).Elem(), "Msg")
	return m
}

// TestMsgCarriesEveryField: every field of a message arrives as it was
// sent, at its extremes, and a message with none set arrives empty.
func TestMsgCarriesEveryField(t *testing.T) {
	for _, m := range []Msg{filled(t), {}, {Op: OpExited, Signal: 9}} {
		var got Msg
		if err := got.unmarshal(m.marshal(nil)); err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("sent %+v, received %+v", m, got)
		}
	}
}

// TestMsgRefusesWhatIsNotOne: a message cut short anywhere, one with bytes
// past its end and one of another form (the JSON of earlier builds) are
// errors, not messages with fields missing.
func TestMsgRefusesWhatIsNotOne(t *testing.T) {
	m := filled(t)
	b := m.marshal(nil)
	for n := range len(b) {
		var got Msg
		if err := got.unmarshal(b[:n]); err == nil {
			t.Errorf("the first %d of %d bytes made a message: %+v", n, len(b), got)
		}
	}
	var got Msg
	if err := got.unmarshal(append(b, 0)); err == nil {
		t.Error("a byte past the end was taken")
	}
	if err := got.unmarshal([]byte(`{"op":"exited"}`)); err == nil {
		t.Error("JSON was taken for a message")
	}
}

// encoded is what the codec encodes: Msg and Config.
type encoded[T any] interface {
	*T
	marshal([]byte) []byte
	unmarshal([]byte) error
}

// sendsBackWhatItTakes fails t when b, taken as a T, is not sent back the
// same; b that is not a T passes.
func sendsBackWhatItTakes[T any, P encoded[T]](t *testing.T, b []byte) {
	var v, again T
	if P(&v).unmarshal(b) != nil {
		return
	}
	if err := P(&again).unmarshal(P(&v).marshal(nil)); err != nil || !reflect.DeepEqual(again, v) {
		t.Fatalf("%x: accepted as %#v, sent back as %#v (%v)", b, v, again, err)
	}
}

// FuzzMsg: no input makes unmarshal panic or allocate without bound, and
// what it accepts it sends back the same.
func FuzzMsg(f *testing.F) {
	m := Msg{Op: OpStarted, Pid: 7, Start: 12345, Mechanisms: []string{"landlock"}}
	f.Add(m.marshal(nil))
	f.Add([]byte{msgMagic, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(sendsBackWhatItTakes[Msg])
}

// fill sets every field below v to a value of its own, read from the
// type: strings, integers, booleans, lists, pointers to structs and maps
// of strings, bytes. The sandbox's mode and network get values corral
// knows.
func fill(t *testing.T, v reflect.Value, name string) {
	switch v.Type() {
	case reflect.TypeFor[corral.SandboxMode]():
		v.Set(reflect.ValueOf(corral.SandboxWorkspace))
		return
	case reflect.TypeFor[corral.Network]():
		v.Set(reflect.ValueOf(corral.NetworkHost))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("value of " + name + " \x00\xff")
	case reflect.Int:
		v.SetInt(-1<<40 - int64(len(name)))
	case reflect.Uint64:
		v.SetUint(1<<63 + uint64(len(name)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint8:
		v.SetUint(uint64(0xa0 + len(name)%16))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 3, 3)
		for i := range 3 {
			fill(t, s.Index(i), name+"["+string(rune('0'+i))+"]")
		}
		v.Set(s)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), name)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), name+"."+v.Type().Field(i).Name)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, k := range []string{"mnt", "pid", "ipc"} {
			val := reflect.New(v.Type().Elem()).Elem()
			fill(t, val, name+"["+k+"]")
			m.SetMapIndex(reflect.ValueOf(k), val)
		}
		v.Set(m)
	default:
		t.Fatalf("%s is a %s, which the test (and the codec?) does not know", name, v.Kind())
	}
}

// TestConfigCarriesEveryField: every field of a run's configuration, the
// sandbox's policy and guard among them, arrives as it was sent; so do
// one with no policy, one with a guard of no host map, and an empty one.
func TestConfigCarriesEveryField(t *testing.T) {
	var full Config
	fill(t, reflect.ValueOf(&full).Elem(), "Config")
	plain := Config{Path: "/bin/true", Args: []string{"true"}, Env: []string{"A=1"}, Ignore: []int{1, 13}}
	guarded := Config{Policy: &sandbox.Policy{Workdir: "/w", Guard: &sandbox.Guard{Hide: []string{"/etc/shadow"}}}}
	for _, c := range []Config{full, plain, guarded, {}} {
		var got Config
		if err := got.unmarshal(c.marshal(nil)); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("sent %#v, received %#v", c, got)
		}
	}
	b := full.marshal(nil)
	for n := range len(b) {
		var got Config
		if got.unmarshal(b[:n]) == nil {
			t.Errorf("the first %d of %d bytes made a configuration", n, len(b))
		}
	}
}

// FuzzConfig: no input makes unmarshal panic or allocate without bound,
// and what it accepts it sends back the same.
func FuzzConfig(f *testing.F) {
	c := Config{Path: "/bin/true", Policy: &sandbox.Policy{Mode: corral.SandboxReadOnly, Loopback: []sandbox.LoopbackPort{{Port: 80}}, Guard: &sandbox.Guard{Host: map[string]string{"a": "b"}}}}
	f.Add(c.marshal(nil))
	f.Fuzz(sendsBackWhatItTakes[Config])
}
