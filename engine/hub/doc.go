// Package hub fetches models from the Hugging Face Hub into the cache that
// huggingface_hub and transformers share, and finds, lists and describes the
// models already there.
//
// The cache (HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)
// holds one folder per repository:
//
//	models--ORG--NAME/
//	  blobs/<etag>                  file contents, named by the Hub's ETag:
//	                                the git SHA-1 of an ordinary file, the
//	                                sha256 of an LFS file (the weights)
//	  snapshots/<commit>/<file>     relative symlinks to ../../blobs/<etag>
//	  refs/<revision>               the commit a branch or tag pointed at
//
// A download goes to blobs/<etag>.incomplete, resumes with a Range request
// after an interruption, and is renamed into place only once its size and
// checksum are right. It holds the blob's lock file meanwhile,
// .locks/models--ORG--NAME/<etag>.lock, an OS file lock as huggingface_hub
// takes, so concurrent pulls (tracer's or Python's) wait for each other
// instead of writing the same file. Weights whose size or sha256 the Hub
// does not announce are refused rather than cached unchecked. Snapshot
// links are made only after every blob of a pull is complete, so the cache
// never holds a corrupt or partial snapshot.
//
// Reading the cache and model folders opens regular files only: a named
// pipe or device (which would block) is reported, never opened.
//
// Resolve is what the rest of tracer calls to turn "ORG/NAME[@REV]" into a
// local folder: it answers from the cache without touching the network when
// it can, and downloads otherwise. Pull always asks the Hub for the latest
// files of a revision, as `tracer pull` does.
package hub
