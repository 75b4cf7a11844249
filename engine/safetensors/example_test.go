package safetensors_test

import (
	"bytes"
	"fmt"

	"tracer/engine/safetensors"
)

func ExampleParse() {
	var file bytes.Buffer
	err := safetensors.Write(&file, []safetensors.Tensor{
		{Name: "norm.weight", DType: safetensors.BF16, Shape: []int{2}, Data: []byte{0x80, 0x3f, 0x00, 0x40}},
	}, map[string]string{"format": "pt"})
	if err != nil {
		panic(err)
	}
	f, err := safetensors.Parse("model.safetensors", file.Bytes())
	if err != nil {
		panic(err)
	}
	t, _ := f.Tensor("norm.weight")
	fmt.Println(t.Name, t.DType, t.Shape, len(t.Data), "bytes")

	// Outside data is checked: here the offsets run past the data.
	_, err = safetensors.Parse("model.safetensors", file.Bytes()[:file.Len()-1])
	fmt.Println(err)
	// Output:
	// norm.weight BF16 [2] 4 bytes
	// safetensors: model.safetensors: tensor "norm.weight": data_offsets [0 4] run past the end of the file (3 bytes of data; truncated file?)
}
