package httpguard

import "testing"

func TestIsLoopbackIsOneRuleForNamesAndAddresses(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "localhost.": true, "app.localhost": true,
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true, "[::1%lo]": true,
		"0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.example.com": false, "": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:7070": true, "localhost:1": true, "[::1]:8765": true, ":7070": false, "0.0.0.0:7070": false} {
		got, err := ListensOnLoopback(addr)
		if err != nil || got != want {
			t.Errorf("ListensOnLoopback(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := ListensOnLoopback("7070"); err == nil {
		t.Error("an address without a port was accepted")
	}
}
