package dev.fencing.verify.run;

import dev.fencing.verify.database.DatabaseKind;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each issuer's lease and pause lengths, and where a run's store and lease live. */
class IssuerTimingTest {

    private final RunConfig base = RunConfig.lockSet(List.of("pause"), 8, Duration.ofSeconds(30), true);

    @Test
    void etcdHoldersArePausedPastTheTwoSecondMinimumTtl() {
        RunConfig etcd = base.withIssuer("etcd");
        assertThat(etcd.lease()).isEqualTo(Duration.ofSeconds(2));
        assertThat(etcd.pauseMin()).isGreaterThanOrEqualTo(etcd.lease().multipliedBy(2));
        RunConfig zk = etcd.withIssuer("zookeeper");
        assertThat(zk.lease()).isEqualTo(Duration.ofSeconds(1));
        assertThat(zk.pauseMin()).isEqualTo(Duration.ofSeconds(2));
        assertThat(base.withIssuer("jdbc-mariadb").pauseMax()).isEqualTo(Duration.ofSeconds(3));
        assertThatThrownBy(() -> IssuerTiming.of("redis")).hasMessageContaining("'redis'");
    }

    @Test
    void theLeaseLivesOnItsIssuersDatabaseAndTheStoreOnItsOwn() {
        RunConfig split = base.withIssuer("jdbc-postgresql").withStore("mariadb")
                .withDatabaseUrls("jdbc:postgresql://10.0.0.9:5432/app?user=ops", "jdbc:mariadb://10.0.0.8/app");
        assertThat(split.storeDatabase().kind()).isEqualTo(DatabaseKind.MARIADB);
        assertThat(split.storeDatabase().user()).isEqualTo("root");
        assertThat(split.leaseDatabase().kind()).isEqualTo(DatabaseKind.POSTGRESQL);
        assertThat(split.leaseDatabase().user()).isEqualTo("ops");
        assertThat(base.withIssuer("etcd").leaseDatabase()).isNull();
        assertThat(base.withIssuer("jdbc-mariadb").leaseDatabase().url()).isEqualTo(RunConfig.DEFAULT_MARIADB_URL);
        assertThat(split.describe().get("databases")).isEqualTo(
                "store jdbc:mariadb://10.0.0.8/app, lease jdbc:postgresql://10.0.0.9:5432/app?user=ops");
        assertThatThrownBy(() -> base.withStore("oracle").storeDatabase()).hasMessageContaining("'oracle'");
        assertThatThrownBy(() -> base.withDatabaseUrls(RunConfig.DEFAULT_MARIADB_URL, RunConfig.DEFAULT_MARIADB_URL))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
