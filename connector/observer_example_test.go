package connector_test

import (
	"context"
	"database/sql"
	"expvar"
	"fmt"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/embedded"
)

// expvarObserver is a metrics adapter in a dozen lines: routes by class, refusals by reason and
// state changes by kind, as expvar maps (publish them with expvar.Publish to serve them on
// /debug/vars). An OpenTelemetry or Prometheus adapter has the same shape: a counter or a span
// per event.
type expvarObserver struct {
	routes, refusals, states expvar.Map
}

func (o *expvarObserver) OnRoute(_ context.Context, ev connector.RouteEvent) {
	if ev.Plan() == nil {
		o.refusals.Add(ev.Refusal, 1)
		return
	}
	o.routes.Add(ev.Plan().Class, 1)
}

func (o *expvarObserver) OnStateChange(ev connector.StateEvent) {
	o.states.Add(string(ev.Kind), 1)
}

// ExampleWithObserver attaches a metrics adapter to a connector.
func ExampleWithObserver() {
	srv, err := embedded.Start(embedded.Options{Name: "hot"})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	cfg := &config.Config{Backends: []config.Backend{{Name: "hot", DSN: srv.DSN("test")}}}
	obs := &expvarObserver{}
	c, err := connector.New(cfg, connector.WithObserver(obs))
	if err != nil {
		panic(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()

	db.Exec("CREATE TABLE items (id INT PRIMARY KEY)")
	db.Exec("INSERT INTO items VALUES (1)")
	db.Exec("/*+ OBROUTE(backend=nowhere) */ SELECT 1") // refused: no such backend

	fmt.Println("routes:", obs.routes.String())
	fmt.Println("refusals:", obs.refusals.String())
	// Output:
	// routes: {"default": 2}
	// refusals: {"unknown_backend": 1}
}
