package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/themes"
)

type themeMsg struct{ styles themes.Styles }

// defaultCommands is the ":" command table. New screens register theirs here.
func defaultCommands() map[string]command {
	cmds := map[string]command{
		"q": {usage: "q  quit", run: func(m *Model, _ []string) tea.Cmd { return m.quit() }},
		"topics": {usage: "topics  back to the topic list", run: func(m *Model, _ []string) tea.Cmd {
			for len(m.stack) > 1 {
				m.pop()
			}
			return nil
		}},
		"topic": {usage: "topic NAME  open a topic's partitions", run: func(m *Model, args []string) tea.Cmd {
			if len(args) != 1 {
				return errStatus(fmt.Errorf("%w: usage :topic NAME", ErrBadInput))
			}
			if err := checkTopicArg(args[0]); err != nil {
				return err
			}
			return func() tea.Msg { return gotoTopicMsg{topic: args[0]} }
		}},
		"tail": {usage: "tail NAME [PARTITION]  follow a topic (all partitions merged) or one partition", run: func(m *Model, args []string) tea.Cmd {
			if len(args) < 1 || len(args) > 2 {
				return errStatus(fmt.Errorf("%w: usage :tail NAME [PARTITION]", ErrBadInput))
			}
			if err := checkTopicArg(args[0]); err != nil {
				return err
			}
			p := allPartitions
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n < 0 {
					return errStatus(fmt.Errorf("%w: partition %q is not a non-negative number", ErrBadInput, args[1]))
				}
				p = n
			}
			return func() tea.Msg { return gotoTopicMsg{topic: args[0], then: []Screen{newTailScreen(m.c, args[0], p)}} }
		}},
		"produce": {usage: "produce NAME  open the produce form", run: func(m *Model, args []string) tea.Cmd {
			if len(args) != 1 {
				return errStatus(fmt.Errorf("%w: usage :produce NAME", ErrBadInput))
			}
			if err := checkTopicArg(args[0]); err != nil {
				return err
			}
			return func() tea.Msg {
				return gotoTopicMsg{topic: args[0], then: []Screen{newProduceScreen(m.c, args[0], -1)}}
			}
		}},
		"theme": {usage: "theme NAME  switch theme (" + strings.Join(themes.Names(), ", ") + ")", run: func(m *Model, args []string) tea.Cmd {
			if len(args) != 1 {
				return errStatus(fmt.Errorf("%w: usage :theme %s", ErrBadInput, strings.Join(themes.Names(), "|")))
			}
			st, err := themes.New(themes.Options{Name: args[0], NoColor: m.c.Opts.NoColor})
			if err != nil {
				return errStatus(err)
			}
			return func() tea.Msg { return themeMsg{st} }
		}},
		"help": {usage: "help  show every key", run: func(m *Model, _ []string) tea.Cmd {
			m.openHelp()
			return nil
		}},
	}
	cmds["quit"] = command{usage: "quit  quit", run: cmds["q"].run}
	return cmds
}

// checkTopicArg refuses a topic name no topic can have (engine's rules,
// "../x", 250 characters) before any screen opens on it.
func checkTopicArg(name string) tea.Cmd {
	if err := engine.ValidateTopicName(name); err != nil {
		return errStatus(err)
	}
	return nil
}

func commandNames(cmds map[string]command) []string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		if n == "quit" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (m *Model) runCommand(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	name := strings.TrimPrefix(f[0], ":")
	c, ok := m.commands[name]
	if !ok {
		return errStatus(fmt.Errorf("%w %q (try :help)", ErrUnknownCommand, name))
	}
	return c.run(m, f[1:])
}
