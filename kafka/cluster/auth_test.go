package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kfake"
)

// SASL PLAIN and SCRAM-SHA-256/512 authenticate against a kfake cluster
// that requires them; a wrong password is refused with the cluster's
// reason.
func TestSASL(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			addr := bootstrap(t, kfake.EnableSASL(), kfake.Superuser(mech, "alice", "s3:cret"))
			s, err := Open(Config{Brokers: ParseBrokers(addr), SASL: mech + ":alice:s3:cret"})
			if err != nil {
				t.Fatalf("Open with %s: %v", mech, err)
			}
			defer s.Close()
			if err := s.CreateTopic("authed", engine.TopicConfig{Partitions: 2}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Produce(testCtx(t), "authed", 1, []engine.Record{{Value: []byte("x")}}); err != nil {
				t.Fatal(err)
			}
			_, err = Open(Config{Brokers: ParseBrokers(addr), SASL: mech + ":alice:wrong", DialTimeout: 3 * time.Second})
			t.Logf("wrong password: %v", err)
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "SASL") || strings.Contains(err.Error(), "wrong") {
				t.Fatalf("wrong password: %v (want ErrUnreachable, password not echoed)", err)
			}
		})
	}
}

// TLS with a CA file: the cluster's certificate is verified against it; a
// client without the CA is refused.
func TestTLSWithCAFile(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pulse test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	addr := bootstrap(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))

	s, err := Open(Config{Brokers: ParseBrokers(addr), CAFile: caFile})
	if err != nil {
		t.Fatalf("Open with the CA file: %v", err)
	}
	defer s.Close()
	if err := s.CreateTopic("secure", engine.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Config{Brokers: ParseBrokers(addr), TLS: true, DialTimeout: 3 * time.Second})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("TLS without the CA: %v, want ErrUnreachable naming the certificate", err)
	}
	_, err = Open(Config{Brokers: ParseBrokers(addr), CAFile: filepath.Join(dir, "missing.pem")})
	if !errors.Is(err, ErrBadTLS) {
		t.Fatalf("missing CA file: %v, want ErrBadTLS", err)
	}
}
