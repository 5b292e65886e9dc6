package dev.fencing.boot.autoconfigure;

import dev.fencing.issuer.InMemoryIssuerBase;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.IssuerBase;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code fencing.issuer.check-fence-store}: a one-sequence issuer (ZooKeeper, etcd) counting below the fence store's
 * highest max_seen fails startup, the sign of a move to a new issuer without {@code fencing.issuer.offset.base};
 * per-resource issuers are not checked.
 */
@Timeout(90)
@ExtendWith(OutputCaptureExtension.class)
class IssuerCounterCheckTest {

    private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                    FencingIssuerOffsetAutoConfiguration.class, FencingAutoConfiguration.class))
            .withPropertyValues("fencing.store.in-memory.single-instance=true"); // an in-memory store stands for one

    /** An in-memory store whose highest max_seen is {@code maxSeen}, on resource accounts:1. */
    private static InMemoryFenceStore storeAt(long maxSeen) throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.fence("accounts:1", new FencingToken("accounts:1", maxSeen, "old-issuer"), () -> null);
        return store;
    }

    @Test
    void aOneSequenceCounterBelowTheHighestMaxSeenFailsStartupSayingWhatToDo() throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("counter is 500 (OneSequence: one sequence for every resource), "
                                + "below the fence store's highest max_seen 700")
                        .hasStackTraceContaining("would be refused as stale")
                        .hasStackTraceContaining("without fencing.issuer.offset.base")
                        .hasStackTraceContaining("make sure the issuer is the one this store's tokens came from")
                        .hasStackTraceContaining("fencing.issuer.etcd.endpoints")
                        .hasStackTraceContaining("docs/issuers.md")
                        .hasStackTraceContaining("set fencing.issuer.check-fence-store=false"));
    }

    /**
     * The failure names where the issuer points ({@code describe()}) and the restart of a lock service that loses its
     * sequence: a trial's Hazelcast issuer (its own bean) failed naming fencing.issuer.etcd.endpoints and
     * fencing.issuer.zookeeper.connect-string only, where the cause was its CP group restarted without CP persistence.
     */
    @Test
    void theFailureNamesWhereTheIssuerPointsAndAWholeClusterRestart() throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        OneSequence described = new Described(500);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> described)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("Hazelcast client 'hz.client_1' of cluster 'orders'")
                        .hasStackTraceContaining("restarted without its data"));
    }

    /**
     * An issuer that, asked for its counter, finds a setup mistake (a trial's Hazelcast client of a cluster in CP
     * unsafe mode: its probe lock outside the CP group 'default') fails startup: it was logged as "the check is
     * skipped" and the application started, answering 500 to every acquiring call.
     */
    @Test
    void aSetupMistakeTheIssuerFindsWhenAskedFailsStartup() throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        OneSequence unsafe = new OneSequence(500) {
            @Override
            public long highestIssued(String resource) {
                throw new IllegalStateException("cannot read its current fence", new dev.fencing
                        .FencingConfigurationException("the cluster's CP Subsystem runs in unsafe mode"));
            }
        };
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> unsafe)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("runs in unsafe mode"));
    }

    /**
     * A reactive application has no blocking fence store: the check reads its R2DBC store's table (a new user's WebFlux
     * application started against an empty ensemble and refused every write as stale, where the servlet one failed).
     */
    @Test
    void aReactiveApplicationsR2dbcStoreIsCheckedToo(CapturedOutput output) {
        String table = "ccheck_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        JdbcTemplate jdbc = new JdbcTemplate(new DriverManagerDataSource(POSTGRES));
        jdbc.execute(dev.fencing.store.sql.FenceSql.POSTGRESQL.createTableSql(table));
        try {
            jdbc.update("INSERT INTO " + table + " (resource, max_seen, holder, updated_at) "
                    + "VALUES ('accounts:1', 700, 'old', CURRENT_TIMESTAMP)");
            ApplicationContextRunner reactive = new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                            FencingIssuerOffsetAutoConfiguration.class, FencingR2dbcAutoConfiguration.class,
                            R2dbcAutoConfiguration.class))
                    .withPropertyValues("spring.r2dbc.url=r2dbc:postgresql://127.0.0.1:5432/test",
                            "spring.r2dbc.username=postgres", "fencing.store.r2dbc.table=" + table);
            reactive.withBean(TokenIssuer.class, () -> new OneSequence(500))
                    .run(context -> assertThat(context).hasFailed().getFailure()
                            .hasStackTraceContaining("counter is 500 (OneSequence: one sequence for every resource), "
                                    + "below the fence store's highest max_seen 700")
                            // no DataSource: the offset the message advises would have nowhere to be stored
                            .hasStackTraceContaining("this application has nowhere to store it: add fencing-jdbc and "
                                    + "a DataSource"));
            reactive.withBean(TokenIssuer.class, () -> new OneSequence(900))
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FenceStore.class));
            // an issuer counting per resource, compared resource by resource (an R2DBC-only application was skipped:
            // a trial's Redis counters, lost, went unsaid until the first write was refused)
            reactive.withBean(TokenIssuer.class, Listing::new).run(context -> assertThat(context).hasNotFailed());
            assertThat(output).contains("below the fence store's max_seen for 1 of the first 1 resources "
                    + "('accounts:1': counter 0, max_seen 700)", "an R2DBC store has no admin operations, so run the "
                    + "floor raise in Java").doesNotContain("POST /actuator/fencing {");
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void turnedOffForAFenceTableSharedWithAnotherIssuerItStartsAndWarns(CapturedOutput output) throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .withPropertyValues("fencing.issuer.check-fence-store=false")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("counter is 500 (OneSequence: one sequence for every resource), below the fence "
                + "store's highest max_seen 700").contains("The check is off (fencing.issuer.check-fence-store=false), "
                + "so this application starts anyway").doesNotContain("set fencing.issuer.check-fence-store=false");
    }

    @Test
    void anInstanceMissingTheOffsetOfAMoveAlreadyMadeIsToldThatOffsetNotANewOne() throws Throwable {
        InMemoryFenceStore store = storeAt(1_200); // written by the instances that have the offset
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        bases.establish("too-low", 100);
        bases.establish("zk-2026", 1_000);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .withBean(IssuerBase.class, () -> bases)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("Issuer offsets are stored that would put it past max_seen: "
                                + "'zk-2026'=1000. If this instance belongs to that move, configure it as the "
                                + "instances that stored it are: fencing.issuer.offset.name=zk-2026 and "
                                + "fencing.issuer.offset.base=1000")
                        .hasStackTraceContaining("Do not choose a base of your own"));
        InMemoryIssuerBase low = new InMemoryIssuerBase();
        low.establish("too-low", 100);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .withBean(IssuerBase.class, () -> low)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("set fencing.issuer.offset.base above 1200")
                        .hasStackTraceContaining("offsets stored so far, none high enough: 'too-low'=100"));
    }

    @Test
    void anInstanceOnALowerOffsetThanAnotherMoveIsToldTheOneThatGetsItPastMaxSeen() throws Throwable {
        InMemoryFenceStore store = storeAt(2_300); // written by instances of the 'default' move
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        bases.establish("zk-2026", 1_000);
        bases.establish("default", 2_000);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.issuer.offset.base=1000", "fencing.issuer.offset.name=zk-2026")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("counter is 1500 (with fencing.issuer.offset.base=1000)")
                        .hasStackTraceContaining("'default'=2000. If this instance belongs to that move")
                        .hasStackTraceContaining("fencing.issuer.offset.name=default and "
                                + "fencing.issuer.offset.base=2000"));
    }

    @Test
    void aCounterAtOrAboveTheHighestMaxSeenStarts() throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(700))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(IssuerCounterCheck.class));
    }

    /**
     * An issuer with a counter per resource is compared resource by resource, and one counting below max_seen (its
     * table on another database after a moved @Primary DataSource, as a new user's trial had it, or restored, or a
     * Redis restart) is named in a warning: startup goes on, since the repair, the actuator's floor raise, needs the
     * application running.
     */
    @Test
    void aPerResourceIssuerCountingBelowMaxSeenIsNamedInAWarning(CapturedOutput output) throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        String warning = "The token issuer's counters (InMemoryTokenIssuer: one per resource) are below the fence "
                + "store's max_seen for 1 of the first 1 resources ('accounts:1': counter 0, max_seen 700)";
        InMemoryTokenIssuer raised = new InMemoryTokenIssuer();
        raised.raiseResourceFloor("accounts:1", 700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> raised)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).doesNotContain("The token issuer's counters");
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains(warning).contains("\"atLeast\": N").contains("at least 700")
                .contains("a forged or hand-made Fencing-Token header").contains("POST /actuator/fencing/{resource}");
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withPropertyValues(IssuerCounterCheck.PROPERTY + "=false")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().split("The token issuer's counters", -1)).as("once more: off").hasSize(2);
    }

    /**
     * The warning names the setup mistake it looks like too: an instance whose issuer points elsewhere than the other
     * instances' (another Redis database index or key prefix, another lease table) has locks of its own and no
     * mutual exclusion with them; raising its counters, the warning's other advice, would hide that. A trial's
     * instance on another Redisson key prefix was told to raise its counters, and then wrote while another instance
     * held the lock.
     */
    @Test
    void theWarningSaysACounterBelowMaxSeenMayBeAnIssuerPointedElsewhereThanTheOtherInstances(CapturedOutput output)
            throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("The token issuer's counters")
                .contains("Redis database index or key prefix")
                .contains("no mutual exclusion with the other instances")
                .contains("before raising any counter");
    }

    /**
     * An empty fence store beside an issuer that issued tokens is named: a fence table of another name than the other
     * instances' (a typo, created at startup) is a second fence; a trial's instance on one accepted token 1 after the
     * other's 2, with nothing said.
     */
    @Test
    void anEmptyFenceStoreBesideAnIssuerThatIssuedTokensIsNamedInAWarning(CapturedOutput output) throws Throwable {
        Listing issued = new Listing("accounts:1");
        runner.withBean(FenceStore.class, InMemoryFenceStore::new).withBean(TokenIssuer.class, () -> issued)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("The fence store holds no max_seen, while the token issuer "
                + "(Listing) has issued tokens for 'accounts:1'", "a second fence");
        int before = output.toString().length();
        InMemoryFenceStore written = storeAt(1);
        runner.withBean(FenceStore.class, () -> written).withBean(TokenIssuer.class, () -> issued)
                .run(context -> assertThat(context).hasNotFailed());
        runner.withBean(FenceStore.class, InMemoryFenceStore::new).withBean(TokenIssuer.class, Listing::new)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().substring(before)).doesNotContain("The fence store holds no max_seen");
    }

    /**
     * A fence store holding only compaction's family floors (a move from ZooKeeper or etcd to the lease after
     * compaction): the issuer's counter for a key of the family is compared with the floor, and one below it named.
     * A trial's startup said nothing, and every key of the family was refused at its first write.
     */
    @Test
    void aFamilyFloorAboveWhatTheIssuerGivesANewKeyIsNamedInAWarning(CapturedOutput output) throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        store.raiseFloor(dev.fencing.store.sql.FenceSql.familyFloorKey("accounts"), 46);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("below the fence store's max_seen for 1 of the first 1 resources "
                + "('accounts:* (the family's floor)': counter 0, max_seen 46)");
        int before = output.toString().length();
        InMemoryTokenIssuer raised = new InMemoryTokenIssuer();
        raised.raiseFamilyFloor("accounts", 46);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> raised)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output.toString().substring(before)).doesNotContain("The token issuer's counters");
    }

    /**
     * The old issuer's application of a move (no offset of its own, a base stored above its range): its startup
     * warning told the operator to raise its counters, which then handed out tokens among the new issuer's (a
     * re-trial). It now says what the instance is and that its counters stay below.
     */
    @Test
    void theOldIssuerOfAMoveIsToldWhatItIsNotToRaiseItsCounters(CapturedOutput output) throws Throwable {
        InMemoryFenceStore store = storeAt(100_004);
        dev.fencing.issuer.InMemoryIssuerBase bases = new dev.fencing.issuer.InMemoryIssuerBase();
        bases.establish("to-zk", 100_000);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .withBean(dev.fencing.issuer.IssuerBase.class, () -> bases)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("an issuer migration stored a base above this issuer's range: 'to-zk'=100000")
                .contains("do not raise its counters").doesNotContain("\"atLeast\": N");
    }

    /**
     * Behind a routing store (two databases), the stores it routes to are read as one: a per-resource counter below
     * its route's max_seen is named, and a one-sequence counter below the highest max_seen of any route fails startup
     * (a re-trial with two databases saw both checks skipped).
     */
    @Test
    void behindARoutingStoreEveryRoutesStoreIsRead(CapturedOutput output) throws Throwable {
        InMemoryFenceStore ledger = new InMemoryFenceStore();
        ledger.fence("ledger:7", new FencingToken("ledger:7", 50, "old"), () -> null);
        InMemoryFenceStore accounts = storeAt(700);
        accounts.fence("ledger:8", new FencingToken("ledger:8", 900, "old"), () -> null); // not its route's: ignored
        dev.fencing.store.RoutingFenceStore routing = dev.fencing.store.RoutingFenceStore.builder()
                .route("accounts", accounts).route("ledger", ledger).build();
        runner.withBean(FenceStore.class, () -> routing).withBean(TokenIssuer.class, InMemoryTokenIssuer::new)
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("for 2 of the first 2 resources ('accounts:1': counter 0, max_seen 700; "
                + "'ledger:7': counter 0, max_seen 50)");
        runner.withBean(FenceStore.class, () -> routing).withBean(TokenIssuer.class, () -> new OneSequence(40))
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("below the fence store's highest max_seen"));
    }

    @Test
    void theOffsetBaseIsCountedAndATooLowOneIsNamed() throws Throwable {
        InMemoryFenceStore store = storeAt(700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .withBean(IssuerBase.class, InMemoryIssuerBase::new)
                .withPropertyValues("fencing.issuer.offset.base=1000")
                .run(context -> assertThat(context).hasNotFailed());
        // the offset's own first-start check off: this check still catches the base that is too low, before the
        // base is stored (a stored base never changes)
        InMemoryIssuerBase bases = new InMemoryIssuerBase();
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(500))
                .withBean(IssuerBase.class, () -> bases)
                .withPropertyValues("fencing.issuer.offset.base=100", "fencing.issuer.offset.check-fence-store=false")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("counter is 600 (with fencing.issuer.offset.base=100)")
                        .hasStackTraceContaining("The offset base 100 is too low for this fence store: choose one "
                                + "above 700"));
        assertThat(bases.storedBases()).as("the refused base was not stored").isEmpty();
    }

    @Test
    void anEmptyStoreOrACounterThatCannotBeReadLetsStartupGoOn() throws Throwable {
        runner.withBean(FenceStore.class, InMemoryFenceStore::new).withBean(TokenIssuer.class, () -> new OneSequence(1))
                .run(context -> assertThat(context).hasNotFailed());
        InMemoryFenceStore store = storeAt(700);
        runner.withBean(FenceStore.class, () -> store).withBean(TokenIssuer.class, () -> new OneSequence(-1))
                .run(context -> assertThat(context).hasNotFailed());
    }

    /**
     * ZooKeeper down when the application starts: the check cannot read the counter and is skipped. A trial's instance
     * started so never learned where the sequence stood, and when the ensemble came back on an empty data dir it
     * handed out tokens from the reset sequence with its health UP (a resource never written took them), while the
     * instances started before refused every lock ("went back"). The issuer is now told the fence store's highest
     * max_seen, and refuses a token at or below it the same way.
     */
    @Test
    void anIssuerStartedWhileZooKeeperIsDownRefusesTokensBelowTheHighestMaxSeen(CapturedOutput output)
            throws Throwable {
        InMemoryFenceStore store = storeAt(5_000_000); // tokens of the ensemble before it lost its data
        try (TestingServer zookeeper = new TestingServer(true)) {
            zookeeper.stop(); // down while the application starts
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                            FencingIssuerOffsetAutoConfiguration.class, FencingAutoConfiguration.class,
                            FencingZooKeeperAutoConfiguration.class))
                    .withBean(FenceStore.class, () -> store)
                    .withPropertyValues("fencing.store.in-memory.single-instance=true", "fencing.issuer.type=zookeeper",
                            "fencing.issuer.zookeeper.connect-string=" + zookeeper.getConnectString(),
                            "fencing.issuer.zookeeper.session-timeout=2s")
                    .run(context -> {
                        assertThat(context).hasNotFailed(); // an outage at startup does not keep it down
                        zookeeper.restart(); // back, its counter far below the tokens it handed out before
                        TokenIssuer issuer = context.getBean(TokenIssuer.class);
                        org.assertj.core.api.Assertions.assertThatThrownBy(() -> {
                            try (Lease lease = issuer.acquire("ledger:7", Duration.ofSeconds(20))) {
                                throw new AssertionError("a token below max_seen was handed out: " + lease.token());
                            }
                        }).hasStackTraceContaining("not above zxid 0x4c4b40, the fence store's highest max_seen "
                                + "(5000000), read at startup while the lock service could not be asked")
                                .hasStackTraceContaining("went back");
                        assertThat(output).contains("the check is skipped")
                                .contains("refuses any token at or below 5000000");
                    });
        }
    }

    /**
     * A typo in the etcd port looks like an outage at startup: the application starts and every acquire fails. A new
     * user's trial (fencing.issuer.etcd.endpoints=http://127.0.0.1:23799) got only "the check is skipped" and a read
     * of resource 'fencing-startup-check', a name it never declared; the warning now says what runs and where to look.
     */
    @Test
    void anUnreachableIssuerAtStartupIsWarnedAboutWithItsAddressAndWhatFollows(CapturedOutput output)
            throws Throwable {
        InMemoryFenceStore store = storeAt(20);
        int closed;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                        FencingIssuerOffsetAutoConfiguration.class, FencingAutoConfiguration.class,
                        FencingEtcdAutoConfiguration.class))
                .withBean(FenceStore.class, () -> store)
                .withPropertyValues("fencing.store.in-memory.single-instance=true", "fencing.issuer.type=etcd",
                        "fencing.issuer.etcd.endpoints=http://127.0.0.1:" + closed)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).contains("refuses any token at or below 20")
                            .contains("did not answer")
                            .contains("every acquiring call fails until it answers")
                            .contains("endpoints=http://127.0.0.1:" + closed);
                });
    }

    /**
     * A connect string whose chroot does not exist: the check cannot read the counter and is skipped, and its warning
     * said only "NoNode for /..." (a new user's trial), while the 503 and the health named the chroot. It names it now.
     */
    @Test
    void aMissingChrootIsNamedInTheSkippedChecksWarning(CapturedOutput output) throws Throwable {
        InMemoryFenceStore store = storeAt(5);
        String chroot = "/zktrial-" + UUID.randomUUID().toString().substring(0, 8);
        try (TestingServer zookeeper = new TestingServer(true)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                            FencingIssuerOffsetAutoConfiguration.class, FencingAutoConfiguration.class,
                            FencingZooKeeperAutoConfiguration.class))
                    .withBean(FenceStore.class, () -> store)
                    .withPropertyValues("fencing.store.in-memory.single-instance=true", "fencing.issuer.type=zookeeper",
                            "fencing.issuer.zookeeper.connect-string=" + zookeeper.getConnectString() + chroot)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(output).contains("the check is skipped")
                                .contains("ZooKeeper at " + zookeeper.getConnectString() + chroot)
                                .contains("does the connect string's chroot " + chroot + " exist? ZooKeeper does not "
                                        + "create it");
                    });
        }
    }

    @Test
    void aRealZooKeeperEnsembleBelowAPostgresFenceTableFailsUntilTheOffsetIsSet() throws Exception {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10).toLowerCase(Locale.ROOT);
        String fenceTable = "fit_counter_fence_" + suffix;
        String baseTable = "fit_counter_base_" + suffix;
        DataSource dataSource = new DriverManagerDataSource(POSTGRES); // a new connection per use: nothing to close
        try (TestingServer zookeeper = new TestingServer(true)) {
            JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true)
                    .build();
            store.verify();
            new JdbcFenceAdmin(store).raiseFloor("ledger", 5_000_000); // the old lease table's tokens
            new JdbcIssuerBase(dataSource, baseTable, true);
            ApplicationContextRunner moved = new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                            FencingIssuerOffsetAutoConfiguration.class, FencingAutoConfiguration.class,
                            FencingJdbcAutoConfiguration.class, FencingZooKeeperAutoConfiguration.class))
                    .withBean(DataSource.class, () -> dataSource)
                    .withPropertyValues("fencing.store.jdbc.table=" + fenceTable, "fencing.issuer.type=zookeeper",
                            "fencing.issuer.zookeeper.connect-string=" + zookeeper.getConnectString(),
                            "fencing.issuer.offset.table=" + baseTable);
            moved.run(context -> assertThat(context).hasFailed().getFailure()
                    .hasStackTraceContaining("(ZooKeeperTokenIssuer: one sequence for every resource), below the "
                            + "fence store's highest max_seen 5000000")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("nowhere to store it")));
            moved.withPropertyValues("fencing.issuer.offset.base=6000000").run(context -> {
                assertThat(context).hasNotFailed();
                try (Lease lease = context.getBean(TokenIssuer.class).acquire("ledger", Duration.ofSeconds(10))) {
                    assertThat(lease.token().value()).isGreaterThan(6_000_000);
                }
            });
        } finally {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            jdbc.execute("DROP TABLE IF EXISTS " + baseTable);
        }
    }

    /**
     * A move from a JDBC lease table to ZooKeeper without an offset, when the old holders' tokens never reached the
     * fence table (its max_seen below the ensemble's counter): the old table's highest token is what a paused holder
     * may present after the new issuer's holders wrote. A trial's zombie wrote that way; startup now fails naming
     * the table, and passes with an offset above it.
     */
    @Test
    void aOneSequenceCounterBelowTheOldLeaseTablesHighestTokenFailsStartup(CapturedOutput output) throws Exception {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10).toLowerCase(Locale.ROOT);
        String fenceTable = "fit_lease_fence_" + suffix;
        String leaseTable = "fit_lease_old_" + suffix;
        String baseTable = "fit_lease_base_" + suffix;
        DataSource dataSource = new DriverManagerDataSource(POSTGRES);
        try (TestingServer zookeeper = new TestingServer(true)) {
            JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build().verify();
            dev.fencing.jdbc.JdbcTokenIssuer old = dev.fencing.jdbc.JdbcTokenIssuer.builder(dataSource)
                    .table(leaseTable).createTableIfMissing(true).build();
            old.raiseResourceFloor("ledger", 5_000_000); // issued, never presented to the fence table
            new JdbcIssuerBase(dataSource, baseTable, true);
            ApplicationContextRunner moved = new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(FencingIssuerCheckAutoConfiguration.class,
                            FencingIssuerOffsetAutoConfiguration.class, FencingAutoConfiguration.class,
                            FencingJdbcAutoConfiguration.class, FencingZooKeeperAutoConfiguration.class))
                    .withBean(DataSource.class, () -> dataSource)
                    .withPropertyValues("fencing.store.jdbc.table=" + fenceTable, "fencing.issuer.type=zookeeper",
                            "fencing.issuer.zookeeper.connect-string=" + zookeeper.getConnectString(),
                            "fencing.issuer.jdbc.table=" + leaseTable, "fencing.issuer.offset.table=" + baseTable);
            moved.run(context -> assertThat(context).hasFailed().getFailure()
                    .hasStackTraceContaining("(ZooKeeperTokenIssuer: one sequence for every resource), below the "
                            + "highest token 5000000 of the JDBC lease table '" + leaseTable + "'")
                    .hasStackTraceContaining("fencing.issuer.offset.base above 5000000"));
            moved.withPropertyValues(IssuerCounterCheck.PROPERTY + "=false").run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(output).contains("below the highest token 5000000", "The check is off");
            });
            moved.withPropertyValues("fencing.issuer.offset.base=6000000").run(context -> {
                assertThat(context).hasNotFailed();
                try (Lease lease = context.getBean(TokenIssuer.class).acquire("ledger", Duration.ofSeconds(10))) {
                    assertThat(lease.token().value()).isGreaterThan(6_000_000);
                }
            });
            // the old table under a name the property does not give (a trial stored base 100 below its 1000, unsaid)
            assertThat(output).doesNotContain("no JDBC lease table");
            moved.withPropertyValues("fencing.issuer.jdbc.table=" + leaseTable + "_elsewhere",
                    "fencing.issuer.offset.base=7000000", "fencing.issuer.offset.name=second-" + suffix)
                    .run(context -> assertThat(context).hasNotFailed());
            assertThat(output).contains("Issuer offset 'second-" + suffix + "': no JDBC lease table '" + leaseTable
                    + "_elsewhere' on the application's DataSource to check base 7000000 against");
        } finally {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            for (String table : List.of(fenceTable, leaseTable, baseTable)) {
                jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /**
     * A fake one-sequence issuer (as ZooKeeper's and etcd's are) whose counter is fixed; a negative counter fails to
     * be read.
     */
    static class OneSequence implements TokenIssuer, IssuedTokens {
        private final long counter;

        OneSequence(long counter) {
            this.counter = counter;
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            throw new UnsupportedOperationException("not acquired in these tests");
        }

        @Override
        public long highestIssued(String resource) {
            if (counter < 0) {
                throw new IllegalStateException("the lock service is unreachable");
            }
            return counter;
        }

        @Override
        public boolean isHeld(String resource) {
            return false;
        }

        @Override
        public boolean oneSequence() {
            return true;
        }
    }

    /** A one-sequence issuer that says where it points, as the Hazelcast issuer does. */
    static final class Described extends OneSequence {
        Described(long counter) {
            super(counter);
        }

        @Override
        public java.util.Map<String, Object> describe() {
            return java.util.Map.of("instance", "Hazelcast client 'hz.client_1' of cluster 'orders'");
        }
    }

    /** An issuer with a counter per resource that lists what it issued for, as the JDBC lease does. */
    static final class Listing implements TokenIssuer, IssuedTokens, dev.fencing.recovery.IssuedResources {
        private final List<String> issued;

        Listing(String... issued) {
            this.issued = List.of(issued);
        }

        @Override
        public Lease acquire(String resource, Duration timeout) {
            throw new UnsupportedOperationException("not acquired in these tests");
        }

        @Override
        public long highestIssued(String resource) {
            return issued.contains(resource) ? 2 : 0;
        }

        @Override
        public boolean isHeld(String resource) {
            return false;
        }

        @Override
        public List<String> issuedResources(String after, int limit) {
            return after == null ? issued.stream().limit(limit).toList() : List.of();
        }
    }
}
