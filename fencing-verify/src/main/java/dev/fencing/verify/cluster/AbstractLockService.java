package dev.fencing.verify.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What both lock services share: members as child processes with a log and a pid file each, starting with a bounded
 * wait that gives up as soon as a member exits, SIGKILL and restart by name, and an idempotent close that the JVM
 * shutdown hook also runs.
 */
abstract class AbstractLockService implements LockService {

    /** How long {@link #start()} waits for the whole service to serve. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    /** How long {@link #restart(String)} waits for the member to serve again. */
    static final Duration RESTART_TIMEOUT = Duration.ofSeconds(60);
    /** How long a SIGKILLed process is waited for. */
    static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private final Path directory;
    private final List<Member> members = new ArrayList<>();
    private final List<Long> launched = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Object lifecycle = new Object();
    private volatile boolean started;
    private volatile boolean closed;

    /** Whether client ports listen on every address (0.0.0.0) instead of loopback only. */
    final boolean clientsOnAnyAddress;

    AbstractLockService(Path directory, boolean clientsOnAnyAddress) {
        this.directory = directory.toAbsolutePath().normalize();
        this.clientsOnAnyAddress = clientsOnAnyAddress;
    }

    /** The address client ports bind. */
    final String clientBindAddress() {
        return clientsOnAnyAddress ? "0.0.0.0" : Ports.LOOPBACK;
    }

    @Override
    public final String clientAddress() {
        return clientAddress(Ports.LOOPBACK);
    }

    /** A member: its name, directory and ports, and its process while it runs. */
    static final class Member {
        final String name;
        final int index;
        final Path dir;
        final List<Integer> ports;
        private volatile Process process;

        Member(String name, int index, Path dir, List<Integer> ports) {
            this.name = name;
            this.index = index;
            this.dir = dir;
            this.ports = List.copyOf(ports);
        }

        Path log() {
            return dir.resolve("member.log");
        }

        boolean alive() {
            Process p = process;
            return p != null && p.isAlive();
        }

        long pid() {
            Process p = process;
            return p != null && p.isAlive() ? p.pid() : -1;
        }

        Integer exitCode() {
            Process p = process;
            return p == null || p.isAlive() ? null : p.exitValue();
        }

        long launch(List<String> command, Map<String, String> environmentChanges) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().keySet().removeIf(k -> k.startsWith("ETCD_") || k.equals("JAVA_TOOL_OPTIONS")
                    || k.equals("JDK_JAVA_OPTIONS"));
            builder.environment().putAll(environmentChanges);
            Files.writeString(log(), "---- " + java.time.Instant.now() + " starting: " + String.join(" ", command)
                    + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
            Process started = builder.start();
            process = started;
            Files.writeString(dir.resolve("pid"), started.pid() + "\n", StandardCharsets.UTF_8);
            return started.pid();
        }

        /** SIGKILL (Process.destroyForcibly on Linux) to the process and any children, then a bounded wait. */
        void kill() {
            Process p = process;
            if (p == null) {
                return;
            }
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            try {
                if (!p.waitFor(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new LockServiceException(name + " (pid " + p.pid() + ") still runs " + KILL_WAIT.toSeconds()
                            + " s after SIGKILL");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockServiceException("interrupted while waiting for " + name + " to die", e);
            }
            try {
                Files.deleteIfExists(dir.resolve("pid"));
            } catch (IOException ignored) {
                // a stale pid file names a dead process
            }
        }

        String logTail(int lines) {
            try {
                List<String> all = Files.readAllLines(log(), StandardCharsets.UTF_8);
                return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
            } catch (IOException | RuntimeException e) {
                return "(no log: " + e + ")";
            }
        }
    }

    // ---- what each service defines

    /** Creates the members (names, directories, ports); called once from the constructor of the subclass. */
    final void addMember(Member member) {
        members.add(member);
    }

    /** Writes configuration files before the first start. */
    abstract void prepare() throws IOException;

    /** The command line of a member; {@code again} when it is restarted on existing data. */
    abstract List<String> command(Member member, boolean again);

    Map<String, String> environment(Member member) {
        return Map.of();
    }

    /** Whether the whole service serves: every member up and a quorum with a leader. */
    abstract boolean serving();

    /** Whether one member serves again as part of the quorum, after a restart. */
    abstract boolean memberServing(Member member);

    /** The leader among the running members, or null. */
    abstract Member leaderMember();

    /** Releases clients the service holds for its own checks; called by close. */
    void closeClients() {
    }

    // ---- LockService

    @Override
    public final Path directory() {
        return directory;
    }

    @Override
    public final List<String> members() {
        return members.stream().map(m -> m.name).toList();
    }

    final List<Member> memberList() {
        return Collections.unmodifiableList(members);
    }

    @Override
    public final List<Integer> ports() {
        return members.stream().flatMap(m -> m.ports.stream()).toList();
    }

    @Override
    public final boolean isRunning(String member) {
        return member(member).alive();
    }

    @Override
    public final long pid(String member) {
        return member(member).pid();
    }

    @Override
    public final void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException(name() + " at " + directory + " is closed");
            }
            if (started) {
                throw new IllegalStateException(name() + " at " + directory + " is already started");
            }
            started = true;
            ShutdownHooks.register(this);
            try {
                Files.createDirectories(directory);
                for (Member member : members) {
                    Files.createDirectories(member.dir);
                }
                prepare();
                for (Member member : members) {
                    launch(member, false);
                }
                await("all of " + members() + " to serve", START_TIMEOUT, members, this::serving);
            } catch (IOException e) {
                failStart(new LockServiceException("could not start " + name() + " at " + directory + ": " + e, e));
            } catch (RuntimeException e) {
                failStart(e);
            } catch (Error e) {
                failStart(e);
            }
        }
    }

    private <T extends Throwable> void failStart(T failure) throws T {
        try {
            close();
        } catch (RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
        throw failure;
    }

    @Override
    public final void kill(String name) {
        member(name).kill();
    }

    @Override
    public final void restart(String name) {
        Member member = member(name);
        synchronized (lifecycle) {
            if (closed || !started) {
                throw new IllegalStateException(name() + " at " + directory + " is "
                        + (closed ? "closed" : "not started"));
            }
            member.kill();
            try {
                launch(member, true);
            } catch (IOException e) {
                throw new LockServiceException("could not restart " + name + ": " + e, e);
            }
        }
        await(name + " to serve again", RESTART_TIMEOUT, List.of(member), () -> memberServing(member));
    }

    @Override
    public final String leader() {
        Member leader = leaderMember();
        return leader == null ? null : leader.name;
    }

    @Override
    public final void close() {
        closed = true;
        List<RuntimeException> failures = new ArrayList<>();
        try {
            closeClients();
        } catch (RuntimeException e) {
            failures.add(e);
        }
        for (Member member : members) {
            try {
                member.kill();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        ShutdownHooks.unregister(this);
        if (!failures.isEmpty()) {
            LockServiceException failure = new LockServiceException("closing " + name() + " at " + directory
                    + " failed: " + failures.get(0).getMessage(), failures.get(0));
            failures.stream().skip(1).forEach(failure::addSuppressed);
            throw failure;
        }
    }

    @Override
    public final List<Long> launchedPids() {
        return List.copyOf(launched);
    }

    // ---- helpers

    final Member member(String name) {
        for (Member member : members) {
            if (member.name.equals(name)) {
                return member;
            }
        }
        throw new IllegalArgumentException("no member '" + name + "' in " + name() + " (members: " + members() + ")");
    }

    private void launch(Member member, boolean again) throws IOException {
        launched.add(member.launch(command(member, again), environment(member)));
        if (closed) {          // close() ran meanwhile (the shutdown hook): leave nothing behind
            member.kill();
            throw new LockServiceException(name() + " was closed while " + member.name + " started");
        }
    }

    /**
     * Polls until the condition holds, failing at the deadline, as soon as one of the watched members exits (with
     * its exit code and the end of its log), or when the service is closed meanwhile.
     */
    private void await(String what, Duration timeout, List<Member> watched, java.util.function.BooleanSupplier ready) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (closed) {
                throw new LockServiceException(name() + " was closed while waiting for " + what);
            }
            for (Member member : watched) {
                Integer exit = member.exitCode();
                if (exit != null) {
                    throw new LockServiceException(member.name + " exited with code " + exit + " while waiting for "
                            + what + "; its log is " + member.log() + ", ending:\n" + member.logTail(15));
                }
            }
            if (ready.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                StringBuilder logs = new StringBuilder();
                for (Member member : watched) {
                    logs.append("\n").append(member.log());
                }
                throw new LockServiceException(name() + " at " + directory + ": timed out after "
                        + timeout.toSeconds() + " s waiting for " + what + "; logs:" + logs);
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockServiceException("interrupted while waiting for " + what, e);
            }
        }
    }
}
