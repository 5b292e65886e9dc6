package dev.fencing.jdbc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link JdbcFenceStore#verify()} says when no transaction manager is listened to. Outside a Spring context
 * (a plain main, docs/plain-java.md) it named a {@code @Bean static BeanPostProcessor} to declare, which such an
 * application has no context for, and its sentence about the starter lacked its verb's subject ("The Spring Boot
 * starter a JdbcFenceStore bean and @EnableFencing ... register it").
 */
@Timeout(30)
class NotListenedToMessageTest {

    @Test
    void outsideASpringContextItNamesOnlyTheCall() {
        String said = JdbcFenceStore.notListenedTo("fences", false);

        assertThat(said).startsWith("JdbcFenceStore on table 'fences': no transaction manager is listened to")
                .contains("TransactionOrigins.listenTo(manager, name)")
                .contains("only when this thread also runs transactions of other managers")
                .doesNotContain("@Bean").doesNotContain("BeanPostProcessor");
    }

    @Test
    void inASpringContextItNamesWhoRegistersTheListener() {
        String said = JdbcFenceStore.notListenedTo("fences", true);

        assertThat(said).contains("The Spring Boot starter (for its JdbcFenceStore bean) and @EnableFencing")
                .contains("TransactionOrigins.beanPostProcessor()")
                .contains("TransactionOrigins.listenTo(manager, name)")
                .doesNotContain("starter a JdbcFenceStore bean");
    }
}
