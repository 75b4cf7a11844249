package tensor_test

import (
	"fmt"

	"tracer/engine/tensor"
)

func ExampleMatVec() {
	// W (2, 3) @ x (3,) -> dst (2,)
	w := tensor.F32Matrix([]float32{
		1, 2, 3,
		4, 5, 6,
	}, 2, 3)
	dst := make([]float32, 2)
	tensor.MatVec(dst, w, []float32{1, 0, -1})
	fmt.Println(dst)
	// Output: [-2 -2]
}

func ExampleRotateHalf() {
	// One head of 4 dims at position 1 with theta 1: pairs (0, 2) and
	// (1, 3) turn by 1 and 1/1^(2/4) = 1 radian.
	inv := make([]float32, 2)
	tensor.RopeInvFreq(inv, 4, 1)
	cos, sin := make([]float32, 2), make([]float32, 2)
	tensor.RopeCosSin(cos, sin, inv, 1)
	x := []float32{1, 0, 0, 1}
	tensor.RotateHalf(x, cos, sin)
	fmt.Printf("%.4f\n", x)
	// Output: [0.5403 -0.8415 0.8415 0.5403]
}
