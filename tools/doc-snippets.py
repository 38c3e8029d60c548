#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every code block of README.md and docs/*.md, built or run, so that no snippet goes stale.

A fenced block with a language (```cpp, ```c, ```python, ```sh, ...) must be preceded by a line
saying how it is checked; a block without a language is a diagram or sample text. The line is an
HTML comment (invisible on the rendered page):

  <!-- snippet: cpp file -->                C++ as a file of its own, compiled (-std=c++20 -Wall
                                            -Wextra -Werror) against the source tree's headers
  <!-- snippet: cpp body(PARAMETERS) -->    C++ statements: leading #include lines stay at the top,
                                            the rest becomes the body of devrt::Status f(PARAMETERS)
                                            in a file that includes <devrt/devrt.hpp>; `with PKG`
                                            after it adds pkg-config's --cflags of PKG
  <!-- snippet: c run -->                   C99 (-std=c99 -pedantic -Werror), linked with
                                            libdevrt_c and run: it must exit 0
  <!-- snippet: python run [PRELUDE] -->    run by Python (the package under test); an
                                            UnavailableError is a skip with its message
  <!-- snippet: sh check -->                `sh -n`, then: every path of this repository it names
                                            exists, every -D option exists in the build, every
                                            build-tree program it runs is a target, every
                                            devrt-info flag is one devrt-info takes
  <!-- snippet: glsl compile -->            glslc, as a compute shader
  <!-- snippet: meson build FILE=LANG -->   a scratch project of the block, FILE holding the
                                            document's previous LANG block, set up and built
  <!-- snippet: wgsl load ENTRY -->         loaded on webgpu:0 and ENTRY looked up (skip without it)
  <!-- snippet: json parse -->, <!-- snippet: toml parse -->
  <!-- snippet: ci -->                      the README's commands, which .ci/run runs as written
  <!-- NAME: test/.../FILE runs this ... --> a test of its own runs the block (it must exist and
                                            name NAME)
Prints one line per block (ok, SKIP with the reason, FAIL with the output) and exits 1 when any
failed.

usage: doc-snippets.py --source ROOT --build BUILD --cxx 'COMMAND' --cc 'COMMAND' [DOC...]
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib

FENCE = re.compile(r"^```(\S+)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*snippet:\s*(.*?)\s*-->\s*$")
MARKER = re.compile(r"^<!--\s*([a-z-]+):\s*(\S+)\s.*-->\s*$")
REPO_PATH = re.compile(r"(?<![\w/.-])(?:\./)?((?:tools|bench|cross|examples|test|docs|include|src|python)/[\w./-]+)")
BUILD_PROGRAM = re.compile(r"\./(build[\w-]*)/([\w./-]+)")
OPTION = re.compile(r"(?<![\w-])-D([\w]+)=")
DEVRT_INFO_FLAG = re.compile(r"devrt-info((?:\s+--[\w-]+)+)")


class Block:
    def __init__(self, doc, line, language, text, directive, previous):
        self.doc, self.line, self.language, self.text = doc, line, language, text
        self.directive, self.previous = directive, previous  # previous: {language: text} of earlier blocks

    @property
    def where(self):
        return f"{self.doc}:{self.line} ({self.language})"


def blocks_of(path, root):
    lines = path.read_text(encoding="utf-8").split("\n")
    previous, i = {}, 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            if lines[i].startswith("```"):  # a block without a language: skip to its end
                i += 1
                while i < len(lines) and not lines[i].startswith("```"):
                    i += 1
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        text = "\n".join(lines[i + 1:end]) + "\n"
        directive = lines[i - 1].strip() if i > 0 else ""
        yield Block(str(path.relative_to(root)), i + 1, fence.group(1), text, directive, dict(previous))
        previous[fence.group(1)] = text
        i = end + 1


def run(command, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 300)
    return subprocess.run(command, check=False, **kwargs)


class Checker:
    def __init__(self, args):
        self.root = pathlib.Path(args.source).resolve()
        self.build = pathlib.Path(args.build).resolve()
        self.cxx = shlex.split(args.cxx)
        self.cc = shlex.split(args.cc)
        self.scratch = pathlib.Path(tempfile.mkdtemp(prefix="doc-snippets-"))
        self.includes = [f"-I{self.root / 'include'}", f"-I{self.build / 'include'}"] + shlex.split(args.cflags)
        self._options = None

    # ---- what the build offers -------------------------------------------------------------

    def options(self):
        if self._options is None:
            out = run(["meson", "introspect", "--buildoptions", str(self.build)])
            self._options = {option["name"] for option in json.loads(out.stdout)} if out.returncode == 0 else set()
        return self._options

    # ---- the modes ---------------------------------------------------------------------------

    def check(self, block):
        directive = DIRECTIVE.match(block.directive)
        if directive is None:
            marker = MARKER.match(block.directive)
            if marker is not None:
                return self.marked(block, marker.group(1), marker.group(2))
            return "FAIL", ("no <!-- snippet: ... --> line before the block says how it is checked "
                            "(tools/doc-snippets.py lists the modes)")
        words = directive.group(1)
        mode, _, rest = words.partition(" ")
        handler = getattr(self, "mode_" + mode.replace("-", "_"), None)
        if mode != block.language.replace("c++", "cpp") and mode != "ci" or handler is None:
            return "FAIL", f"'snippet: {words}' is no mode for a {block.language} block"
        return handler(block, rest.strip())

    def marked(self, block, name, test):
        path = self.root / test
        if not path.is_file():
            return "FAIL", f"the block names {test}, which does not exist"
        if name not in path.read_text(encoding="utf-8"):
            return "FAIL", f"{test} does not look for the '{name}' marker"
        return "ok", f"run by {test}"

    def mode_ci(self, block, _):
        ci = (self.root / ".ci" / "run").read_text(encoding="utf-8")
        commands = [line.split("#")[0].strip() for line in block.text.splitlines() if line.strip()]
        missing = [command for command in commands if command.lstrip("./") not in ci]
        if missing:
            return "FAIL", f".ci/run does not run {missing}"
        return "ok", "run by .ci/run"

    def compile(self, compiler, flags, source, suffix, name, extra=()):
        path = self.scratch / (name + suffix)
        path.write_text(source, encoding="utf-8")
        out = run(compiler + flags + self.includes + list(extra) + ["-fsyntax-only", str(path)])
        if out.returncode != 0:
            numbered = "\n".join(f"{n + 1:4} {line}" for n, line in enumerate(source.splitlines()))
            return "FAIL", f"does not compile:\n{out.stderr}\n{numbered}"
        return "ok", "compiles"

    CXX_FLAGS = ["-std=c++20", "-Wall", "-Wextra", "-Werror", "-Wno-unused-variable", "-Wno-unused-parameter",
                 "-Wno-unused-but-set-variable"]

    def mode_cpp(self, block, rest):
        name = f"{pathlib.Path(block.doc).stem}_{block.line}"
        if rest == "file":
            return self.compile(self.cxx, self.CXX_FLAGS, block.text, ".cpp", name)
        body = re.fullmatch(r"body\((.*)\)(?:\s+with\s+([\w.+-]+))?", rest, re.S)
        if body is None:
            return "FAIL", f"'cpp {rest}': use 'cpp file' or 'cpp body(PARAMETERS) [with PKG]'"
        lines = block.text.splitlines()
        head = [line for line in lines if line.startswith("#include")]
        statements = [line for line in lines if not line.startswith("#include")]
        source = "#include <devrt/devrt.hpp>\n" + "\n".join(head) + \
            f"\n\ndevrt::Status snippet({body.group(1)}) {{\n" + "\n".join(statements) + \
            "\n  return devrt::Status();\n}\n"
        extra = []
        if body.group(2):
            flags = run(["pkg-config", "--cflags", body.group(2)])
            if flags.returncode != 0:
                return "SKIP", f"pkg-config knows no {body.group(2)} here"
            extra = shlex.split(flags.stdout)
        return self.compile(self.cxx, self.CXX_FLAGS, source, ".cpp", name, extra)

    def mode_c(self, block, rest):
        if rest != "run":
            return "FAIL", "'c' blocks are 'c run'"
        name = f"{pathlib.Path(block.doc).stem}_{block.line}"
        source = self.scratch / (name + ".c")
        source.write_text(block.text, encoding="utf-8")
        program = self.scratch / name
        library = self.build / "src" / "capi"
        out = run(self.cc + ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"] + self.includes +
                  [str(source), "-o", str(program), f"-L{library}", "-ldevrt_c", f"-Wl,-rpath,{library}"])
        if out.returncode != 0:
            return "FAIL", f"does not compile as C99:\n{out.stderr}"
        ran = run([str(program)], cwd=self.scratch)
        if ran.returncode != 0:
            return "FAIL", f"exits {ran.returncode}:\n{ran.stdout}{ran.stderr}"
        return "ok", "compiles as C99 and runs"

    def mode_python(self, block, rest):
        if not rest.startswith("run"):
            return "FAIL", "'python' blocks are 'python run [PRELUDE]'"
        prelude = rest[len("run"):].strip()
        code = (prelude + "\n" if prelude else "") + block.text
        ran = run([sys.executable, "-c", code], cwd=self.scratch)
        if ran.returncode != 0:
            unavailable = re.search(r"devrt\.UnavailableError: (.*)", ran.stderr)
            if unavailable:
                return "SKIP", unavailable.group(1)
            return "FAIL", f"exits {ran.returncode}:\n{ran.stdout}{ran.stderr}"
        return "ok", "runs"

    def mode_sh(self, block, rest):
        if rest != "check":
            return "FAIL", "'sh' blocks are 'sh check' (or marked as run by a test, or 'snippet: ci')"
        syntax = run(["sh", "-n"], input=block.text)
        if syntax.returncode != 0:
            return "FAIL", f"sh -n: {syntax.stderr}"
        problems = []
        text = re.sub(r"#[^\n]*", "", block.text)  # comments say things; commands must be right
        for path in REPO_PATH.findall(text):
            if not (self.root / path).exists():
                problems.append(f"{path} does not exist")
        for directory, program in BUILD_PROGRAM.findall(text):
            # A program of the build tree: an executable its folder's meson.build makes (whatever
            # this build's options turned on).
            declared = self.root / pathlib.Path(program).parent / "meson.build"
            name = pathlib.Path(program).name
            if not declared.is_file() or f"'{name}'" not in declared.read_text(encoding="utf-8"):
                problems.append(f"{directory}/{program}: no meson.build declares {name}")
        for option in OPTION.findall(text):
            if option not in self.options():
                problems.append(f"-D{option} is no option of this build")
        flags = self.devrt_info_flags()
        for group in DEVRT_INFO_FLAG.findall(text):
            for flag in group.split():
                if flags is not None and flag not in flags:
                    problems.append(f"devrt-info takes no {flag}")
        return ("FAIL", "; ".join(problems)) if problems else ("ok", "sh -n, paths, options and flags")

    def devrt_info_flags(self):
        program = self.build / "tools" / "devrt-info"
        if not program.exists():
            return None
        return set(re.findall(r"--[\w-]+", run([str(program), "--help"]).stdout))

    def mode_glsl(self, block, rest):
        glslc = shutil.which("glslc")
        if glslc is None:
            return "SKIP", "no glslc (Debian's glslc)"
        source = self.scratch / f"{pathlib.Path(block.doc).stem}_{block.line}.comp"
        source.write_text(block.text, encoding="utf-8")
        out = run([glslc, str(source), "-o", str(source.with_suffix(".spv"))])
        return ("FAIL", out.stderr) if out.returncode != 0 else ("ok", "glslc compiles it")

    def mode_meson(self, block, rest):
        match = re.fullmatch(r"build((?:\s+[\w.]+=\w+)*)", rest)
        if match is None:
            return "FAIL", "'meson' blocks are 'meson build [FILE=LANG ...]'"
        project = self.scratch / f"meson_{pathlib.Path(block.doc).stem}_{block.line}"
        project.mkdir()
        for pair in match.group(1).split():
            filename, language = pair.split("=")
            if language not in block.previous:
                return "FAIL", f"{filename}: no {language} block before this one in {block.doc}"
            (project / filename).write_text(block.previous[language], encoding="utf-8")
        (project / "meson.build").write_text("project('snippet', meson_version: '>= 1.0.1')\n" + block.text)
        setup = run(["meson", "setup", str(project / "build"), str(project)])
        if setup.returncode != 0:
            return "FAIL", f"meson setup:\n{setup.stdout[-2000:]}"
        built = run(["ninja", "-C", str(project / "build")])
        return ("FAIL", f"ninja:\n{built.stdout[-2000:]}") if built.returncode != 0 else ("ok", "sets up and builds")

    def mode_wgsl(self, block, rest):
        entry = rest.removeprefix("load").strip()
        code = ("import sys, devrt\n"
                "device = devrt.webgpu(0)\n"
                "if not device.exist: print('SKIP', devrt.backend.availability('webgpu') or 'no webgpu:0'); sys.exit()\n"
                f"module = devrt.Module.load(device, 'wgsl', sys.stdin.read()); module[{entry!r}]\n")
        ran = run([sys.executable, "-c", code], input=block.text)
        if ran.returncode != 0:
            return "FAIL", f"{ran.stdout}{ran.stderr}"
        if ran.stdout.startswith("SKIP"):
            return "SKIP", ran.stdout[5:].strip()
        return "ok", f"loads on webgpu:0 and has {entry}"

    def mode_json(self, block, rest):
        try:
            json.loads(block.text)
        except ValueError as error:
            return "FAIL", f"not JSON: {error}"
        return "ok", "parses"

    def mode_toml(self, block, rest):
        try:
            tomllib.loads(block.text)
        except tomllib.TOMLDecodeError as error:
            return "FAIL", f"not TOML: {error}"
        return "ok", "parses"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--cc", required=True)
    parser.add_argument("--cflags", default="", help="more compiler arguments (dlpack's include directory)")
    parser.add_argument("docs", nargs="*", help="documents relative to --source (default: README.md, docs/*.md)")
    args = parser.parse_args()
    checker = Checker(args)
    root = checker.root
    docs = [root / d for d in args.docs] or [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    blocks = [block for doc in docs for block in blocks_of(doc, root)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(checker.check, blocks))
    shutil.rmtree(checker.scratch, ignore_errors=True)
    counts = {"ok": 0, "SKIP": 0, "FAIL": 0}
    for block, (verdict, detail) in zip(blocks, results):
        counts[verdict] += 1
        first, _, more = detail.partition("\n")
        print(f"{verdict:4} {block.where}: {first}")
        if verdict == "FAIL" and more:
            print("\n".join("     " + line for line in more.splitlines()))
    print(f"{len(blocks)} blocks: {counts['ok']} ok, {counts['SKIP']} skipped, {counts['FAIL']} failed")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
