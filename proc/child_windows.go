package proc

import (
	"errors"
)

func spawn(a *spawnAttr) (child, error) {
	return nil, errors.New("proc: Windows support is not built yet")
}
