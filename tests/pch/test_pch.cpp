// The translation unit that builds the tests' shared precompiled header (tests/CMakeLists.txt,
// llmbench_test_pch); every test target reuses it. Nothing else.
