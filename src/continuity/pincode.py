"""The Python inside each pinned hook command: check the startup script's digest, then run it.

Codex trusts a hook by the hash of its definition, which covers the command string but not the
script, so the digest and the code that checks it both live in the command. The code runs argv[1]
only when its SHA-256 equals argv[2], executing exactly the bytes it hashed; otherwise it reads stdin
and, in the form for a start event (argv[3]), prints a valid hook answer that says memory was not
restored. A relative script path is taken from the git top level of the session's directory.

Every session start waits for this code, so it is written for speed: Python runs with -I -S; the
POSIX form imports only `sys`, the built-in `posix` module (importing `os` costs about a millisecond
by itself) and the built-in SHA-256 (`json` only to word a mismatch), and it is a plain multi-line
program rather than a one-liner, so nothing is compiled at run time. It reads the script only as a
regular file of at most 1 MiB (a FIFO, a device or a huge file is a mismatch, never a hang). The
verified bytes are compiled once per digest and kept under the user's cache folder as
`startup-<digest>-<bytecode magic>.code`, which is used only when this user owns it and nobody else
can write it. A relative or empty XDG_CACHE_HOME or HOME is ignored, and with no absolute one there
is no cache: taken relative to the session's folder, it would let a repository plant the code that
runs. The `.git` walk uses lstat, which works under seccomp profiles that refuse faccessat2.
PowerShell's form (`commandWindows`) is one line with `os`.
"""

# No single quote: the shell quotes the program with them. Doubled braces are format() escapes.
_POSIX = """\
import sys,posix as o
a=sys.argv;p=a[1];e=o.environ;t=c=o.getcwd();m=1<<20
try:from _sha256 import sha256 as S
except ImportError:
 try:from _sha2 import sha256 as S
 except ImportError:from hashlib import sha256 as S
def r(f,x):
 d=o.open(f,o.O_RDONLY|o.O_NONBLOCK);s=o.fstat(d)
 try:
  if s.st_mode>>12!=8 or s.st_size>m or x and(s.st_uid!=o.getuid()or s.st_mode&18):raise OSError
  return o.read(d,s.st_size+1)
 finally:o.close(d)
while 1:
 try:o.lstat(t.rstrip("/")+"/.git");break
 except OSError:
  if t=="/":t=c;break
  t=t.rpartition("/")[0] or "/"
if p[:1]!="/":p=t.rstrip("/")+"/"+p
try:b=r(p,0)
except OSError:b=b""
if S(b).hexdigest()!=a[2]:
 sys.stdin.buffer.read(m){notice}
 sys.exit(0)
sys.argv=[p]+a[{rest}:]
h=e.get(b"XDG_CACHE_HOME",b"")
if h[:1]!=b"/":h=(e.get(b"HOME")or b"-")+b"/.cache"
if h[:1]!=b"/":h=b"/dev/null"
g=__import__("_frozen_importlib_external").MAGIC_NUMBER.hex()
k=h+f"/continuity/pycache/startup-{{a[2]}}-{{g}}.code".encode()
import marshal
try:C=marshal.loads(r(k,1))
except Exception:
 C=compile(b,p,"exec")
 try:
  import os;os.makedirs(os.path.dirname(k),448,True);n=k+os.urandom(6).hex().encode()
  with open(o.open(n,o.O_WRONLY|o.O_CREAT|o.O_EXCL|o.O_NOFOLLOW,384),"wb") as f:f.write(marshal.dumps(C))
  os.replace(n,k)
 except OSError:pass
exec(C,{{"__name__":"__main__","__file__":p}})"""
_POSIX_NOTICE = (
    '\n import json;q=a[3];print(json.dumps({{"hookSpecificOutput":{{"hookEventName":q,"additionalContext":'
    '"<private-memory event="+json.dumps(q)+" status="+json.dumps("unavailable")+">\\n{text}\\n</private-memory>"}}}}))'
)

# The same program for PowerShell, on one line inside double quotes (so it uses single quotes).
_WINDOWS_HEAD = (
    "import os,sys;a=sys.argv;w=lambda s:__import__('json').dumps(s);p=a[1];c=os.getcwd();"
    "exec('try:from _sha256 import sha256 as S\\nexcept ImportError:\\n try:from _sha2 import sha256 as S"
    "\\n except ImportError:from hashlib import sha256 as S');"
    "ps=[c]+[c:=os.path.dirname(c) for _ in range(64)];"
    "t=next((d for d in ps if os.path.lexists(os.path.join(d,'.git'))),ps[0]);"
    "p=p if os.path.isabs(p) else os.path.join(t,p);"
    "b=open(p,'rb').read() if os.path.isfile(p) else b'';"
    "ok=S(b).hexdigest()==a[2];"
    "ok or sys.stdin.buffer.read();"
)
_WINDOWS_NOTICE = (
    "ok or print(w(dict(hookSpecificOutput=dict(hookEventName=a[3],additionalContext="
    "'<private-memory event='+w(a[3])+' status='+w('unavailable')+'>\\n{text}\\n"
    "</private-memory>'))));"
)
_WINDOWS_TAIL = (
    "ok or sys.exit(0);sys.argv=[p]+a[{rest}:];R,W,E=('rb','wb','exec');"
    "h=os.environ.get('XDG_CACHE_HOME','');"
    "k=os.path.join(h if os.path.isabs(h) else os.path.join(os.path.expanduser('~'),'.cache'),"
    "'continuity','pycache','startup-'+a[2]+'-'+sys.implementation.cache_tag+'.code');"
    "exec('import marshal\\ntry:C=marshal.loads(open(k,R).read())\\nexcept Exception:\\n C=compile(b,p,E)\\n"
    " try:\\n  os.makedirs(os.path.dirname(k),448,True);t=k+str(os.getpid());f=open(t,W);f.write(marshal.dumps(C))"
    ";f.close();os.replace(t,k)\\n except OSError:pass');"
    "exec(C,dict(__name__='__main__',__file__=p))"
)
NOT_RESTORED = (
    "Private memory was not restored: scripts/agent-startup-context.py changed since this hook was reviewed "
    "(its SHA-256 differs from the one pinned in the hook command). Continue under AGENTS.md, and do not "
    "claim that private identity, preferences or handoffs were restored. "
)


def pin_code(advice: str, *, start: bool, windows: bool = False) -> str:
    """The program for `python -I -S -c`: argv SCRIPT DIGEST [EVENT] ARGS…

    EVENT only in the form for a start event, which answers a mismatch with a notice ending in
    `advice` (what the person can do); the other events answer it with nothing.
    """
    text = NOT_RESTORED + advice
    rest = 4 if start else 3
    if windows:
        notice = _WINDOWS_NOTICE.format(text=text) if start else ""
        return _WINDOWS_HEAD + notice + _WINDOWS_TAIL.format(rest=rest)
    return _POSIX.format(notice=_POSIX_NOTICE.format(text=text) if start else "", rest=rest)
