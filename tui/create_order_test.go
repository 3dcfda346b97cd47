package tui

import (
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// A topic created from the form leaves "created topic NAME" on the status
// line in whatever order bubbletea may deliver the messages that close the
// form: closing a screen clears the status line, so the form must be gone
// before the topics screen says what it created. The messages of a
// tea.Batch come in no promised order; deliverLastFirst hands them over
// last first.
func TestCreatedTopicStatusOutlivesTheForm(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Update(tea.WindowSizeMsg{Width: testWidth, Height: testHeight})
	topics := m.Top()
	form := newCreateTopicScreen(m.c, topics.ID())
	m.push(form)
	if err := e.CreateTopic("events", engine.DefaultTopicConfig()); err != nil {
		t.Fatal(err)
	}
	_, cmd := m.Update(createdMsg{to: to{form.ID()}, name: "events"})
	deliverLastFirst(t, m, cmd, 2)
	if m.Top() != topics {
		t.Fatalf("the form is still open: top screen %T", m.Top())
	}
	if !strings.Contains(m.View(), "created topic events") {
		t.Errorf("status line after the create: %q, want \"created topic events\"", m.status)
	}
}

// deliverLastFirst runs cmd and hands its messages to m: those of a
// tea.Batch last first, those of a tea.Sequence in order, as bubbletea may
// deliver them. The commands m answers with are followed the same way,
// depth levels deep; deeper ones (timers among them) are not run.
func deliverLastFirst(t *testing.T, m *Model, cmd tea.Cmd, depth int) {
	t.Helper()
	if cmd == nil || depth < 0 {
		return
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		for i := len(batch) - 1; i >= 0; i-- {
			deliverLastFirst(t, m, batch[i], depth)
		}
		return
	}
	if v := reflect.ValueOf(msg); v.IsValid() && v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		for i := range v.Len() { // a sequence
			deliverLastFirst(t, m, v.Index(i).Interface().(tea.Cmd), depth)
		}
		return
	}
	if msg == nil {
		return
	}
	_, next := m.Update(msg)
	deliverLastFirst(t, m, next, depth-1)
}
