// Package remotetest starts a real serving engine for tests: the build of
// llama.cpp's HTTP server in ../shared/tools/llama-server, found through
// refdata like every other piece of reference data.
package remotetest

import (
	"context"
	"testing"
	"time"

	"tracer/engine/refdata"
	"tracer/engine/remote"
)

// StartLlamaServer starts llama.cpp's server on 127.0.0.1 on a port the OS
// picks, with stories260K-f32.gguf and an F32 KV cache (its default F16
// cache moves probabilities by about 1e-3), and stops it when the test
// ends. It returns the server's URL. Outside CI it skips when the shared
// data is absent; in CI that fails, as refdata.Need does.
func StartLlamaServer(t testing.TB) string {
	t.Helper()
	bin := refdata.Need(t, "tools/llama-server/llama-server")
	model := refdata.Need(t, "models/stories260K/stories260K-f32.gguf")
	// Two minutes are a safety net against a hang, not a measurement.
	s, err := remote.StartLlamaServer(context.Background(), bin, 2*time.Minute, "-m", model, "-t", "1", "-c", "1024", "-ctk", "f32", "-ctv", "f32", "--host", "127.0.0.1", "--port", "0")
	if err != nil {
		t.Fatalf("llama-server: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.URL
}
