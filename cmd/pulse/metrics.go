package main

import (
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/metrics"
	"github.com/pulselog/pulse/wsapi"
)

// openMetered opens the engine on dir with a fresh metrics registry as its
// observer (fsync times, commit sizes); startAPI serves the registry at
// /metrics when apiConfig.Metrics is set.
func openMetered(dir string) (*engine.Engine, *metrics.Metrics, error) {
	m := metrics.New()
	opts := engine.DefaultOptions(dir)
	opts.Observer = m
	e, err := engine.Open(opts)
	return e, m, err
}

// serverConnections reports srv's open connections per API for /metrics.
func serverConnections(srv *wsapi.Server) metrics.Connections {
	return func() (map[string]int, int64) {
		st := srv.Stats()
		return map[string]int{
			"websocket":         st.MuxConns,
			"websocket_produce": st.ProduceConns,
			"websocket_tail":    st.TailConns,
			"sse":               st.EventStreams,
		}, st.SlowClosed
	}
}
