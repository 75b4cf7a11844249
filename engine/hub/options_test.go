package hub

import (
	"path/filepath"
	"testing"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Options
	}{
		{"defaults", map[string]string{"HOME": "/home/u"},
			Options{CacheDir: filepath.Join("/home/u", ".cache", "huggingface", "hub"), Endpoint: DefaultEndpoint}},
		{"XDG_CACHE_HOME", map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg"},
			Options{CacheDir: filepath.Join("/xdg", "huggingface", "hub"), Endpoint: DefaultEndpoint}},
		{"HF_HOME", map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg", "HF_HOME": "/hf"},
			Options{CacheDir: filepath.Join("/hf", "hub"), Endpoint: DefaultEndpoint}},
		{"HF_HUB_CACHE wins", map[string]string{"HF_HOME": "/hf", "HF_HUB_CACHE": "/cache"},
			Options{CacheDir: "/cache", Endpoint: DefaultEndpoint}},
		{"endpoint, token, offline", map[string]string{"HF_HOME": "/hf", "HF_ENDPOINT": "http://mirror:8080/", "HF_TOKEN": " hf_x\n", "HF_HUB_OFFLINE": "1"},
			Options{CacheDir: filepath.Join("/hf", "hub"), Endpoint: "http://mirror:8080", Token: "hf_x", Offline: true}},
		{"empty token, offline words", map[string]string{"HF_HOME": "/hf", "HF_TOKEN": "", "HF_HUB_OFFLINE": "TRUE"},
			Options{CacheDir: filepath.Join("/hf", "hub"), Endpoint: DefaultEndpoint, Offline: true}},
		{"offline 0", map[string]string{"HF_HOME": "/hf", "HF_HUB_OFFLINE": "0"},
			Options{CacheDir: filepath.Join("/hf", "hub"), Endpoint: DefaultEndpoint}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tc.env[k] })
			if err != nil || got.CacheDir != tc.want.CacheDir || got.Endpoint != tc.want.Endpoint || got.Token != tc.want.Token || got.Offline != tc.want.Offline {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := FromEnv(func(string) string { return "" }); err == nil {
		t.Error("no HOME, HF_HOME or HF_HUB_CACHE: got no error")
	}
}
