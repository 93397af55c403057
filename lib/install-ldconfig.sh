#!/bin/sh
# Run by `meson install` after installing into the live system (meson skips it
# under --destdir; a package runs ldconfig through its own trigger). The
# dynamic linker finds libqsf.so.0 in /usr/local/lib/x86_64-linux-gnu only once
# ldconfig has cached it, so this runs ldconfig, then asks the cache where
# libqsf.so.0 is: when that is not the directory just installed (not root, or
# a prefix outside /etc/ld.so.conf), it says so at the end of the install
# output, with the commands that make programs find the library.
# Argument: the installed library directory.
libdir=$1
soname=libqsf.so.0
# /sbin is not in every user's PATH
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)

if ldconfig_out=$("$ldconfig" 2>&1); then ran=yes; else ran=no; fi
found=$("$ldconfig" -p 2>/dev/null | sed -n "s|^[[:space:]]*$soname (.*) => ||p" | head -n 1)
if [ "$found" = "$libdir/$soname" ]; then
  echo "ldconfig: programs find $libdir/$soname"
  exit 0
fi

# meson 1.0 shows an install script's output only when the script fails:
# the note goes to the terminal when there is one (stderr otherwise).
if (: >/dev/tty) 2>/dev/null; then exec 3>/dev/tty; else exec 3>&2; fi
cat >&3 <<MSG

************************************************************************
* qsf is installed, but programs will not find $soname:
*   the dynamic linker's cache (ldconfig -p) gives: ${found:-nothing}
MSG
if [ $ran = no ]; then
  printf '*   ldconfig failed: %s\n' "$ldconfig_out" | head -n 3 >&3
  cat >&3 <<MSG
* Run it as root:
*   sudo ldconfig
MSG
else
  cat >&3 <<MSG
* $libdir is not in the linker's search path (/etc/ld.so.conf). Add it:
*   echo $libdir | sudo tee /etc/ld.so.conf.d/qsf.conf && sudo ldconfig
* or link programs with -Wl,-rpath,$libdir
MSG
fi
echo "************************************************************************" >&3
exit 0
