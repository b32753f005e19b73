/// drivegraph symbol visibility.
///
/// The library is built with hidden visibility (-fvisibility=hidden): only
/// the functions declared with DG_API in drivegraph.h and block.h are
/// exported from libdrivegraph.so, so the ABI is exactly what the public
/// headers declare. Every public function declaration starts with DG_API;
/// tests/test_symbols.sh checks the exported set against the headers.
///
/// The library's build defines DG_BUILDING_LIBRARY; for programs and
/// plugins including these headers DG_API expands to nothing.
#ifndef DRIVEGRAPH_EXPORT_H
#define DRIVEGRAPH_EXPORT_H

#if defined(DG_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define DG_API __attribute__((visibility("default")))
#else
#define DG_API
#endif

#endif
