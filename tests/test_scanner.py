"""The scanner labels each candidate identifier with its context; comments and literals are never code."""

from musify.frontend.scanner import Ctx, scan


def labels(text):
    return [(i.name, i.ctx) for i in scan(text).idents]


def test_code_comment_string_contexts():
    text = 'cudaMalloc(p); // cudaFree in a comment\nprintf("cudaMemcpy %d", cudaSuccess); /* cuInit */\n'
    assert labels(text) == [("cudaMalloc", Ctx.CODE), ("cudaSuccess", Ctx.CODE)]
    kinds = [c for _, _, c in scan(text).spans]
    assert kinds == [Ctx.COMMENT, Ctx.STRING, Ctx.COMMENT]


def test_preprocessor_contexts():
    text = ('#include <cuda_runtime.h>\n#define CUDA_CHECK(x) cudaGetLastError()\n'
            '#if CUDA_VERSION > 1 && defined(__CUDACC__)\n#endif\n#ifdef cuFoo\n#endif\n')
    got = labels(text)
    assert ("CUDA_CHECK", Ctx.MACRO_NAME) in got
    assert ("cudaGetLastError", Ctx.MACRO) in got
    assert ("CUDA_VERSION", Ctx.DIRECTIVE) in got and ("__CUDACC__", Ctx.DIRECTIVE) in got
    s = scan(text)
    assert [(i.path, i.angled) for i in s.includes] == [("cuda_runtime.h", True)]
    assert [d.keyword for d in s.directives] == ["include", "define", "if", "endif", "ifdef", "endif"]


def test_continued_define_body_is_macro_context():
    text = "#define CALL(x) \\\n   cudaFree(x)\ncudaMalloc(0);\n"
    assert labels(text) == [("cudaFree", Ctx.MACRO), ("cudaMalloc", Ctx.CODE)]


def test_raw_strings_char_literals_and_digit_separators():
    text = "auto s = R\"xy(cudaFree \" )\" still)xy\"; int n = 1'000'000; char c = L'c'; cudaFree(0);\n"
    assert labels(text) == [("cudaFree", Ctx.CODE)]
    assert not scan(text).problems


def test_raw_string_delimiter_with_quotes():
    '''CUTLASS's nvrtc test bench (`test/unit/nvrtc/thread/testbed.h`) holds its kernel source in
    `R"""( ... )"""`: the delimiter is `""` (a '"' may be one of its characters; g++ agrees).'''
    text = 'const char *src = R"""(\n__global__ void k() { cudaFree(0); }\n)""";\ncudaMalloc(0);\n'
    s = scan(text)
    assert not s.problems
    assert labels(text) == [("cudaMalloc", Ctx.CODE)]
    assert [text[a:b] for a, b, _ in s.spans] == ['R"""(\n__global__ void k() { cudaFree(0); }\n)"""']


def test_continued_line_comment():
    text = "// a comment \\\n cudaFree(x) still comment\ncudaMalloc(0);\n"
    assert labels(text) == [("cudaMalloc", Ctx.CODE)]


def test_word_inside_longer_identifier_is_not_a_candidate():
    assert labels("int Accumulate = my_cudaMalloc + xCUDA_VERSION;") == []


def test_unterminated_comment_and_string_are_problems():
    s = scan('int a; "open string\n/* never closed')
    assert [p.what for p in s.problems] == ["string literal", "comment"]


def test_stringizing_hash_is_not_a_directive():
    s = scan("#define S(x) #x\n#define P(a, b) a ## b\n")
    assert [d.keyword for d in s.directives] == ["define", "define"]


def test_error_directive_text_is_not_scanned():
    s = scan("#error don't use cudaFoo here\ncudaMalloc(0);\n")
    assert not s.problems
    assert [(i.name, i.ctx) for i in s.idents] == [("cudaMalloc", Ctx.CODE)]


def test_code_map():
    text = 'a = 1; // k<<<1,1>>>()\n'
    cm = scan(text).code_map()
    assert cm.is_code(0) and not cm.is_code(text.index("k<<<"))


def test_comment_continued_at_end_of_file_terminates():
    for text in ("// a \\", "// a \\\n", "// a \\\nb \\", "x; // \\\r\n\\"):
        spans = scan(text).spans
        assert spans[0][2] == Ctx.COMMENT and spans[0][1] <= len(text)


def test_the_scan_init_is_the_generated_one():
    """`Scan`'s hand-written `__init__` takes the fields in order with the fields' defaults (a fresh
    container for each default factory, never one shared between scans) and stores what the
    dataclass's generated `__init__` would, given or defaulted; the compiled scanner's result
    is the one the Python scanner makes."""
    import dataclasses
    import inspect

    from musify.frontend import scanner

    fields = dataclasses.fields(scanner.Scan)
    params = list(inspect.signature(scanner.Scan.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    for p, f in zip(params, fields):
        if f.default is not dataclasses.MISSING:
            assert p.default == f.default, f.name
    reference = dataclasses.make_dataclass("Reference", [(f.name, f.type, f) for f in fields])
    names = [f.name for f in fields]
    one, two, ref = scanner.Scan(), scanner.Scan(), reference()
    assert [getattr(one, n) for n in names] == [getattr(ref, n) for n in names]
    for n in names:
        if isinstance(getattr(one, n), (list, scanner.IdentList)):
            assert getattr(one, n) is not getattr(two, n), n
    values = (scanner.IdentList(), [1], [2], [3], [4], "tree", None, ("cu",))
    assert [getattr(scanner.Scan(*values), n) for n in names] == list(values)
    assert [getattr(scanner.Scan(**dict(zip(names, values))), n) for n in names] == list(values)
    assert dataclasses.replace(one, tree=1).tree == 1 and dataclasses.replace(one, tree=1).idents == one.idents
    text = "#include <cuda.h>\n/* c */ cudaMalloc(&p, 4); // x\n"
    native = scanner.scan(text, scanner.VENDOR_PREFIXES)
    assert native == scanner.scan_python(text, scanner.VENDOR_PREFIXES)
    assert native.prefixes == scanner.VENDOR_PREFIXES
