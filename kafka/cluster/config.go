package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Config says how to reach a cluster.
type Config struct {
	// Brokers is the bootstrap list (host:port). Required.
	Brokers []string
	// TLS turns on TLS; CAFile (PEM) replaces the system roots, CertFile
	// and KeyFile (PEM) are a client certificate. Any of the files implies
	// TLS.
	TLS      bool
	CAFile   string
	CertFile string
	KeyFile  string
	// SASL is "mechanism:user:password" with mechanism PLAIN,
	// SCRAM-SHA-256 or SCRAM-SHA-512 (case-insensitive); "" is none.
	SASL string
	// ClientID is the Kafka client id; default "pulse".
	ClientID string
	// DialTimeout bounds connecting to the cluster at Open; default 5s.
	DialTimeout time.Duration
}

// ParseBrokers splits a comma-separated bootstrap list, dropping blanks.
func ParseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

func (c Config) withDefaults() Config {
	if c.ClientID == "" {
		c.ClientID = "pulse"
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	return c
}

// ParseSASL turns "mechanism:user:password" into a kgo SASL mechanism. The
// password may contain colons.
func ParseSASL(s string) (sasl.Mechanism, error) {
	mech, rest, ok := strings.Cut(s, ":")
	user, pass, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || user == "" {
		return nil, fmt.Errorf("%w (got %q)", ErrBadSASL, redact(s))
	}
	switch strings.ToUpper(mech) {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("%w (mechanism %q)", ErrBadSASL, mech)
}

// redact hides the password part of a SASL setting in error messages.
func redact(s string) string {
	mech, rest, _ := strings.Cut(s, ":")
	user, _, ok := strings.Cut(rest, ":")
	if !ok {
		return mech + ":…"
	}
	return mech + ":" + user + ":…"
}

func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.TLS && c.CAFile == "" && c.CertFile == "" && c.KeyFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %w", ErrBadTLS, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrBadTLS, c.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both the cert file and the key file", ErrBadTLS)
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate: %w", ErrBadTLS, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// clientOpts are the kgo options every client of a Source shares.
func (c Config) clientOpts() ([]kgo.Opt, error) {
	if len(c.Brokers) == 0 {
		return nil, ErrNoBrokers
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(c.ClientID),
		kgo.DialTimeout(c.DialTimeout),
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if c.SASL != "" {
		m, err := ParseSASL(c.SASL)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}
