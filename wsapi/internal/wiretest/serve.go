package wiretest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// ServeWS serves each websocket connection made to it with handle (the
// connection is closed when handle returns) until the test ends, and
// returns the ws:// URL to dial: a peer that speaks the protocol by hand,
// for tests of what a real server or client makes of its bytes.
func ServeWS(tb testing.TB, handle func(ws *websocket.Conn)) string {
	tb.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		handle(ws)
	}))
	tb.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}
