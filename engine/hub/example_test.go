package hub_test

import (
	"fmt"

	"tracer/engine/hub"
)

func ExampleParseRef() {
	for _, spec := range []string{"HuggingFaceTB/SmolLM2-135M", "karpathy/tinyllamas@main", "org/model@v1.0", "../etc"} {
		r, err := hub.ParseRef(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("repo %s revision %s: %s\n", r.Repo, r.Revision, r)
	}
	// Output:
	// repo HuggingFaceTB/SmolLM2-135M revision main: HuggingFaceTB/SmolLM2-135M
	// repo karpathy/tinyllamas revision main: karpathy/tinyllamas
	// repo org/model revision v1.0: org/model@v1.0
	// "../etc" is not a Hugging Face model name: want ORG/NAME or ORG/NAME@REVISION
}

func ExampleRepoDir() {
	fmt.Println(hub.RepoDir("/home/me/.cache/huggingface/hub", "HuggingFaceTB/SmolLM2-135M"))
	// Output: /home/me/.cache/huggingface/hub/models--HuggingFaceTB--SmolLM2-135M
}
