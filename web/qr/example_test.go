package qr_test

import (
	"fmt"

	"tracer/web/qr"
)

// The students' link of a classroom fits a version 2 code, 25 modules a
// side.
func ExampleEncode() {
	c, err := qr.Encode([]byte("http://192.168.1.5:8080/"))
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Version, c.Size, c.Dark(0, 0))
	// Output: 2 25 true
}
