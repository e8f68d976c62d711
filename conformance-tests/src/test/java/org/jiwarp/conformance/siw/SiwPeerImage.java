package org.jiwarp.conformance.siw;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The bootable siw peer that {@code conformance-tests/siw-peer/build-peer.sh} builds from Debian 12
 * packages and caches outside the repository, in {@code $JIWARP_SIW_CACHE} (default
 * {@code ~/.cache/jiwarp-siw-peer}): Debian's kernel ({@code vmlinuz}), an initramfs with siw,
 * rdma-core and the command loop ({@code initrd.img}), and the package versions it was built from.
 *
 * <p>Tests call {@link #whyUnavailable()} to skip where the peer cannot exist, then
 * {@link #ensureBuilt()}, which runs the script (quick when the cache is current) once per JVM.
 */
public final class SiwPeerImage {

    /** The script, relative to the module directory (surefire's working directory) or the repo. */
    private static final List<String> SCRIPT_CANDIDATES = List.of(
            "siw-peer/build-peer.sh", "conformance-tests/siw-peer/build-peer.sh");
    private static final long BUILD_TIMEOUT_MINUTES = 30;

    private static SiwPeerImage built;
    private static SiwPeerImage nfsBuilt;

    private final Path directory;

    private SiwPeerImage(Path directory) {
        this.directory = directory;
    }

    /** {@code $JIWARP_SIW_CACHE}, or {@code ~/.cache/jiwarp-siw-peer}, as the script sees it. */
    public static Path cacheDirectory() {
        String value = System.getenv("JIWARP_SIW_CACHE");
        if (value != null && !value.isBlank()) {
            return Path.of(value);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "jiwarp-siw-peer");
    }

    /** The build script: {@code -Djiwarp.siw.buildScript}, else looked up from the working directory. */
    public static Path buildScript() {
        String override = System.getProperty("jiwarp.siw.buildScript");
        if (override != null && !override.isBlank()) {
            return Path.of(override);
        }
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            for (String candidate : SCRIPT_CANDIDATES) {
                Path script = d.resolve(candidate);
                if (Files.isRegularFile(script)) {
                    return script;
                }
            }
        }
        return dir.resolve(SCRIPT_CANDIDATES.get(1));
    }

    /**
     * Why the peer cannot be had on this machine, or {@code null} when it can (it may still need
     * building). Cheap: it runs nothing.
     */
    public static String whyUnavailable() {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            return "the siw peer needs Linux (QEMU and Debian packages)";
        }
        if (!System.getProperty("os.arch", "").matches("amd64|x86_64")) {
            return "the siw peer is an x86_64 guest";
        }
        if ("skip".equalsIgnoreCase(System.getenv("JIWARP_SIW")) || "skip".equalsIgnoreCase(System.getProperty("jiwarp.siw"))) {
            return "siw peer tests switched off (JIWARP_SIW=skip or -Djiwarp.siw=skip)";
        }
        SiwPeerImage cached = new SiwPeerImage(cacheDirectory());
        boolean root = "root".equals(System.getProperty("user.name"));
        if (!Files.isRegularFile(buildScript()) && !cached.isBuilt()) {
            return "no build script at " + buildScript() + " and no cached peer in " + cached.directory;
        }
        if (onPath("qemu-system-x86_64") == null && !root) {
            return "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)";
        }
        if (!cached.isBuilt() && (onPath("apt-get") == null || onPath("dpkg-deb") == null)) {
            return "no cached peer and no apt-get/dpkg-deb to build one";
        }
        return null;
    }

    /**
     * The image, built or brought up to date first by {@code build-peer.sh}. Runs the script once
     * per JVM; the script itself returns at once when the cache matches the package versions.
     *
     * @throws SiwPeerException with the script's output when the build fails
     */
    public static synchronized SiwPeerImage ensureBuilt() {
        if (built != null) {
            return built;
        }
        return built = build(buildScript(), cacheDirectory());
    }

    /**
     * {@code $JIWARP_SIW_NFS_CACHE}, or {@code ~/.cache/jiwarp-siw-nfs-peer}: the NFS variant's
     * cache, apart from the base peer's so building it never changes that one.
     */
    public static Path nfsCacheDirectory() {
        String value = System.getenv("JIWARP_SIW_NFS_CACHE");
        if (value != null && !value.isBlank()) {
            return Path.of(value);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "jiwarp-siw-nfs-peer");
    }

    /**
     * The NFS-over-RDMA variant that {@code build-nfs-peer.sh} builds on top of the base peer:
     * nfsd with svcrdma, rpcbind and rpc.mountd, and {@code jw-nfs-serve} to start them.
     */
    public static synchronized SiwPeerImage ensureNfsBuilt() {
        if (nfsBuilt != null) {
            return nfsBuilt;
        }
        return nfsBuilt = build(buildScript().resolveSibling("build-nfs-peer.sh"), nfsCacheDirectory());
    }

    private static SiwPeerImage build(Path script, Path cacheDirectory) {
        SiwPeerImage cached = new SiwPeerImage(cacheDirectory);
        if (!Files.isRegularFile(script)) {
            if (cached.isBuilt()) {
                return cached;
            }
            throw new SiwPeerException("no siw peer build script at " + script);
        }
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString(), "--print-dir").redirectErrorStream(true);
        pb.environment().put("JIWARP_SIW_CACHE", cacheDirectory().toString());
        pb.environment().put("JIWARP_SIW_NFS_CACHE", nfsCacheDirectory().toString());
        String output;
        int exit;
        try {
            Process process = pb.start();
            process.getOutputStream().close();
            StringBuilder text = new StringBuilder();
            Thread drain = new Thread(() -> text.append(readAll(process.getInputStream())), "siw-peer-build");
            drain.start();
            if (!process.waitFor(BUILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new SiwPeerException(script.getFileName() + " took longer than " + BUILD_TIMEOUT_MINUTES + " minutes");
            }
            drain.join();
            output = text.toString();
            exit = process.exitValue();
        } catch (IOException e) {
            throw new SiwPeerException("cannot run " + script, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SiwPeerException("interrupted while building the siw peer", e);
        }
        if (exit != 0 || !cached.isBuilt()) {
            throw new SiwPeerException(script.getFileName() + " failed (exit " + exit + "):\n" + output);
        }
        return cached;
    }

    /** The image in the cache as it is, without building; for tools that must not run apt. */
    public static SiwPeerImage cached() {
        SiwPeerImage image = new SiwPeerImage(cacheDirectory());
        if (!image.isBuilt()) {
            throw new SiwPeerException("no siw peer in " + image.directory + ": run " + buildScript());
        }
        return image;
    }

    public boolean isBuilt() {
        return Files.isRegularFile(kernel()) && Files.isRegularFile(initrd()) && Files.isRegularFile(directory.resolve("key"));
    }

    public Path directory() {
        return directory;
    }

    public Path kernel() {
        return directory.resolve("vmlinuz");
    }

    public Path initrd() {
        return directory.resolve("initrd.img");
    }

    /** Package to version, plus {@code kernel-abi}, as the image was built. */
    public Map<String, String> versions() {
        Map<String, String> versions = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(directory.resolve("versions.txt"))) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    versions.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return versions;
    }

    @Override
    public String toString() {
        return "siw peer " + directory + " " + versions().getOrDefault("kernel-abi", "?");
    }

    static Path onPath(String program) {
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(List.of(path == null ? new String[0] : path.split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin"));
        for (String dir : dirs) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static String readAll(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(output lost: " + e + ")";
        }
    }
}
