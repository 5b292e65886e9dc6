package dev.fencing.docs.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

class LeaderElectionConfigTest {

    @Test
    void theElectedLeaderPublishesWithItsTermsToken() throws Exception {
        try (var context = new AnnotationConfigApplicationContext()) {
            context.registerBean(TokenIssuer.class, InMemoryTokenIssuer::new);
            context.register(LeaderElectionConfig.class);
            context.refresh();
            assertThat(context.getBean(LockRegistryLeaderInitiator.class).isRunning()).isTrue();
            LeaderElectionConfig.ReportWriter writer = context.getBean(LeaderElectionConfig.ReportWriter.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (writer.term == null && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(writer.term).as("elected within 10 s").isNotNull();
            writer.term.get(10, TimeUnit.SECONDS);
            assertThat(context.getBean(LeaderElectionConfig.Reports.class).published()).containsExactly("daily@1");
        }
    }
}
