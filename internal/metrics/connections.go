package metrics

import "github.com/pulselog/pulse/wsapi"

// ServerConnections reports srv's open connections per API, by the names
// pulse_open_connections uses, and its slow-consumer closes.
func ServerConnections(srv *wsapi.Server) Connections {
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
