package main

import (
	"context"
	"errors"
	"io"
)

const explainUsage = `obroute explain: print the route plan of a statement without running it

Usage:
  obroute explain -config obroute.yaml "SQL"
`

func runExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}
