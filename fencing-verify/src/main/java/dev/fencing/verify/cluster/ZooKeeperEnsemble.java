package dev.fencing.verify.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A ZooKeeper ensemble, each server its own JVM running ZooKeeper's own {@code QuorumPeerMain} from the
 * {@code org.apache.zookeeper:zookeeper} artifact on this JVM's class path. Server {@code n} (1-based, named
 * {@code zk-n}) lives in {@code <dir>/zk/<n>/}: {@code zoo.cfg}, {@code data/} (with {@code myid}, the transaction
 * log and snapshots), {@code member.log} (its output, appended across restarts) and {@code pid}. It listens on three
 * free loopback ports: client, quorum and leader election. The admin server is off and the four-letter commands
 * {@code srvr}, {@code mntr} and {@code ruok} are allowed: the leader is found with {@code srvr}.
 *
 * <p>A killed server restarts on the same configuration and data, so it rejoins with its history and zxids (and so
 * czxids, the tokens of {@code ZooKeeperTokenIssuer}) keep growing across kills and leader changes.
 */
public final class ZooKeeperEnsemble extends AbstractLockService {

    /** ZooKeeper's server main class, run in each server's JVM. */
    public static final String MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

    /** The tick: sessions may last 2 to 120 ticks (1 s to 60 s), see {@link #config(Member)}. */
    static final int TICK_MILLIS = 500;

    private static final String LOGBACK = """
            <configuration>
              <appender name="out" class="ch.qos.logback.core.ConsoleAppender">
                <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n</pattern></encoder>
              </appender>
              <root level="INFO"><appender-ref ref="out"/></root>
            </configuration>
            """;

    /** Three servers under {@code runDir/zk/}. */
    public ZooKeeperEnsemble(Path runDir) {
        this(runDir, 3, false);
    }

    /**
     * @param runDir              the run's directory: the servers live in {@code runDir/zk/<n>/}
     * @param size                how many servers
     * @param clientsOnAnyAddress client ports on every address ({@code 0.0.0.0}) instead of loopback only, for
     *                            clients in other network namespaces; quorum and election ports stay on loopback
     */
    public ZooKeeperEnsemble(Path runDir, int size, boolean clientsOnAnyAddress) {
        super(runDir.resolve("zk"), clientsOnAnyAddress);
        if (size < 1) {
            throw new IllegalArgumentException("an ensemble needs a server, asked for " + size);
        }
        List<Integer> ports = Ports.free(3 * size);
        for (int n = 1; n <= size; n++) {
            int at = 3 * (n - 1);
            addMember(new Member("zk-" + n, n, directory().resolve(String.valueOf(n)), ports.subList(at, at + 3)));
        }
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    static int clientPort(Member member) {
        return member.ports.get(0);
    }

    /** The client port of a server, e.g. for {@code srvr}. */
    public int clientPort(String member) {
        return clientPort(member(member));
    }

    @Override
    public String clientAddress(String host) {
        return memberList().stream().map(m -> host + ":" + clientPort(m)).collect(Collectors.joining(","));
    }

    @Override
    void prepare() throws IOException {
        for (Member member : memberList()) {
            Files.createDirectories(member.dir.resolve("data"));
            Files.writeString(member.dir.resolve("data").resolve("myid"), member.index + "\n", StandardCharsets.UTF_8);
            Files.writeString(member.dir.resolve("zoo.cfg"), config(member), StandardCharsets.UTF_8);
            // used only if a Logback binding is on the class path (its default would be DEBUG)
            Files.writeString(member.dir.resolve("logback.xml"), LOGBACK, StandardCharsets.UTF_8);
        }
    }

    /**
     * A server's {@code zoo.cfg}. Short ticks so that a killed leader is replaced within a few seconds; sessions from
     * 1 to 60 s; {@code forceSync=no}: the nemeses kill processes, never the machine, and a killed process loses no
     * write the kernel already has, while fsyncs on this shared, loaded machine stall for seconds and expire
     * sessions that no fault touched.
     */
    String config(Member member) {
        StringBuilder cfg = new StringBuilder();
        cfg.append("# written by fencing-verify for ").append(member.name).append('\n');
        cfg.append("tickTime=").append(TICK_MILLIS).append('\n');
        cfg.append("initLimit=20\nsyncLimit=10\n");
        cfg.append("minSessionTimeout=").append(2 * TICK_MILLIS).append('\n');
        cfg.append("maxSessionTimeout=").append(120 * TICK_MILLIS).append('\n');
        cfg.append("dataDir=").append(member.dir.resolve("data")).append('\n');
        cfg.append("clientPortAddress=").append(clientBindAddress()).append('\n');
        cfg.append("clientPort=").append(clientPort(member)).append('\n');
        cfg.append("admin.enableServer=false\n");
        cfg.append("4lw.commands.whitelist=srvr,mntr,ruok\n");
        cfg.append("forceSync=no\n");
        cfg.append("preAllocSize=4096\n");
        cfg.append("snapCount=20000\n");
        cfg.append("autopurge.snapRetainCount=3\nautopurge.purgeInterval=1\n");
        for (Member m : memberList()) {
            cfg.append("server.").append(m.index).append('=').append(Ports.LOOPBACK).append(':')
                    .append(m.ports.get(1)).append(':').append(m.ports.get(2)).append('\n');
        }
        return cfg.toString();
    }

    @Override
    List<String> command(Member member, boolean again) {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        // the class path goes in an argument file: ps and the log show a readable command line
        Path argFile = member.dir.resolve("classpath.args");
        try {
            Files.writeString(argFile, "-cp \"" + classPath().replace("\\", "\\\\") + "\"\n",
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new LockServiceException("could not write " + argFile + ": " + e, e);
        }
        return new ArrayList<>(List.of(java, "-Xms32m", "-Xmx160m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.net.preferIPv4Stack=true",
                "-Dzookeeper.admin.enableServer=false", "-Dfencing.verify.member=" + member.name,
                // a restarted member retries its election port until it is free, rather than exit after 3 tries
                "-Dzookeeper.electionPortBindRetry=0",
                "-Dlogback.configurationFile=" + member.dir.resolve("logback.xml"),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "@" + argFile,
                MAIN_CLASS, member.dir.resolve("zoo.cfg").toString()));
    }

    /**
     * This JVM's class path, which holds the ZooKeeper server (a dependency of this module: under Maven the test
     * class path, from the shaded jar the jar itself).
     */
    static String classPath() {
        // absolute: a server runs in its own directory, and java -jar gives a class path relative to where it ran
        String classPath = java.util.Arrays.stream(System.getProperty("java.class.path", "").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty()).map(entry -> Paths.get(entry).toAbsolutePath().toString())
                .collect(Collectors.joining(File.pathSeparator));
        try {
            Class.forName(MAIN_CLASS, false, ZooKeeperEnsemble.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new LockServiceException(MAIN_CLASS + " is not on the class path: fencing-verify depends on "
                    + "org.apache.zookeeper:zookeeper to run the ensemble", e);
        }
        return classPath;
    }

    /** What {@code srvr} says a server's mode is: {@code leader}, {@code follower}, or null when it does not serve. */
    static String mode(Member member) {
        if (!member.alive()) {
            return null;
        }
        String answer = Ports.fourLetterWord(clientPort(member), "srvr", 1000);
        if (answer == null) {
            return null;
        }
        for (String line : answer.split("\n")) {
            if (line.startsWith("Mode: ")) {
                return line.substring("Mode: ".length()).trim();
            }
        }
        return null; // "This ZooKeeper instance is not currently serving requests"
    }

    @Override
    boolean serving() {
        int leaders = 0;
        for (Member member : memberList()) {
            String mode = mode(member);
            if (mode == null) {
                return false;
            }
            if (mode.equals("leader") || mode.equals("standalone")) {
                leaders++;
            } else if (!mode.equals("follower")) {
                return false;
            }
        }
        return leaders == 1;
    }

    @Override
    boolean memberServing(Member member) {
        String mode = mode(member);
        return "leader".equals(mode) || "follower".equals(mode) || "standalone".equals(mode);
    }

    @Override
    Member leaderMember() {
        for (Member member : memberList()) {
            String mode = mode(member);
            if ("leader".equals(mode) || "standalone".equals(mode)) {
                return member;
            }
        }
        return null;
    }
}
