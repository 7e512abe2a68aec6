"""Staleness classes (run.py): other filesystems."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


def ext2_image(t, name, files):
    """An ext2 image t.p(name + ".img") holding `files` ({name: text}), each stamped 2020-01-01
    00:00:00 (mtime and ctime, whole seconds): images made alike hold files of equal inode, size
    and times, whatever their content."""
    for tool in ("mkfs.ext2", "debugfs", "unshare", "mount"):
        if not shutil.which(tool):
            raise Skip("no %s to make and mount filesystem images" % tool)
    src, img = t.p(name + ".d"), t.p(name + ".img")
    for rel, text in files.items():
        t.write(os.path.join(name + ".d", rel), text)
    with open(img, "wb") as f:
        f.truncate(1 << 20)
    steps = [["mkfs.ext2", "-q", "-F", "-I", "128", "-d", src, img]]
    steps += [["debugfs", "-w", "-R", "sif /%s %s 20200101000000" % (rel, field), img]
              for rel in files for field in ("mtime", "ctime")]
    for argv in steps:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise Skip("%s failed: %s" % (argv[0], r.stderr.decode().strip()[-200:]))
    return img


def mounted(t, mount_point, *imgs):
    """Every gpujit run from now on in a private mount namespace of its own, with imgs loop-mounted
    read-only at mount_point, each over the one before; Skip where this machine cannot."""
    at = shlex.quote(t.p(mount_point))
    script = " && ".join("mount -o loop,ro %s %s" % (shlex.quote(i), at) for i in imgs)
    wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c", script + ' && exec "$0" "$@"']
    r = subprocess.run(wrap + ["true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise Skip("cannot loop-mount an image in a private mount namespace here: %s"
                   % (r.stderr.decode().strip()[-200:] or "exit %d" % r.returncode))
    t.wrap = wrap


@stale
def header_on_filesystem_mounted_over(t):
    """-I m, m an ext2 image's mount holding h.h; another image is mounted over it whose h.h has
    the same inode, size, mtime and ctime and another content: only the device tells them apart.
    Then a third, a copy of the first, over both: another device, the first's content — a hit."""
    imgs = [ext2_image(t, n, {"h.h": V(v)}) for n, v in (("a", 1), ("b", 2), ("c", 1))]
    t.write("k.cu", inc("h.h"))
    t.mkdir("m")
    mounted(t, "m", imgs[0])
    t.check("image a", "k.cu", "-I", "m")
    mounted(t, "m", *imgs[:2])
    t.check("image b over a", "k.cu", "-I", "m", differs="image a")
    mounted(t, "m", *imgs)
    must_hit_check(t, "image c (a copy of a) over b", "k.cu", "-I", "m")
