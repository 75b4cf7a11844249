package models

import "fmt"

// openHF opens a Hugging Face model folder.
func openHF(dir string) (*Loaded, error) {
	return nil, fmt.Errorf("model %s: Hugging Face folders are not supported yet", dir)
}

// openLlama2c opens a llama2.c checkpoint.
func openLlama2c(path string) (*Loaded, error) {
	return nil, fmt.Errorf("model %s: llama2.c checkpoints are not supported yet", path)
}
