package main

import (
	"errors"

	"golang.org/x/sys/windows"
)

// addrInUse reports whether err is a listen that failed because the
// address is taken: Winsock's WSAEADDRINUSE, which syscall.EADDRINUSE (an
// errno Go invents on Windows) does not match.
func addrInUse(err error) bool { return errors.Is(err, windows.WSAEADDRINUSE) }
