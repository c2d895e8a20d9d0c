package main

import "github.com/corralrun/corral/internal/cliflag"

var version = cliflag.Version
