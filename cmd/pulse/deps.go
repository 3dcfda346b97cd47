package main

// Module dependencies that are not imported by code yet. Removed once every
// one of them is used by a package of Pulse.
import (
	_ "github.com/charmbracelet/bubbles/list"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/gorilla/websocket"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/muesli/termenv"
	_ "go.etcd.io/bbolt"
	_ "go.uber.org/goleak"
)
