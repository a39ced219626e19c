/* Empty stand-in for the header CUDA 13 removed but clang 19's CUDA wrapper still includes
 * (docs/rewriter.md). Only mgb-rewrite's host-side parse puts this on -isystem. */
