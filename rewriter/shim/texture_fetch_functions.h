/* Empty stand-in for the header CUDA 13 removed but clang 19's CUDA wrapper still includes
 * (see shared/notes/toolchain.md). Only mgb-rewrite's host-side parse puts this on -isystem. */
