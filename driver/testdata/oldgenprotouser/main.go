// Command oldgenprotouser is the main package of a service that still uses packages of the
// 2023 genproto monolith that later versions dropped (Cloud Monitoring's and Pub/Sub's v1
// APIs, as contrib.go.opencensus.io/exporter/stackdriver does) and adds obroute's driver:
// TestImportNextToOldGenproto builds it in a module of its own that requires that monolith
// (its go.mod is written by the test). A newer monolith in obroute's go.mod would make its
// go mod tidy fail: "module google.golang.org/genproto@latest found, but does not contain
// package google.golang.org/genproto/googleapis/monitoring/v3".
package main

import (
	"database/sql"
	"fmt"

	_ "github.com/obroute/obroute/driver"
	monitoring "google.golang.org/genproto/googleapis/monitoring/v3"
	pubsub "google.golang.org/genproto/googleapis/pubsub/v1"
)

func main() {
	fmt.Println(new(monitoring.TimeSeries).GetUnit() == "", new(pubsub.Topic).GetName() == "", sql.Drivers())
}
