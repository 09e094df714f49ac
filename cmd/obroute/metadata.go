package main

import (
	"context"
	"errors"
	"io"
)

const metadataUsage = `obroute metadata: shard metadata jobs

Usage:
  obroute metadata mark-hot -dsn DSN -hot-months 2
`

func runMetadata(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}
