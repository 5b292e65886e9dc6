package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.guard.InvalidKeyException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A record key's text is its components' ({@code ShelfRef[slots=[J@1b2c]}): a record parameter with an array
 * component fails startup, and one whose component is declared {@code Object} is refused per call when the value has
 * an identity text, before any lock is taken. Before, both ran: two holders of one shelf, each with a record of its
 * own, each took "its" lock and wrote, both accepted.
 */
class RecordKeyTextTest {

    /** One shelf, named by its slot numbers. */
    public record ShelfRef(long[] slots) {
    }

    /** An entity without a toString() of its own. */
    public static final class Shelf {
        final long id;

        public Shelf(long id) {
            this.id = id;
        }
    }

    /** A shelf's reference whose component is declared open: the value decides, per call. */
    public record ShelfHolder(Object shelf) {
    }

    static class SlotsRepository {
        @Fenced(resource = "shelves", key = "#ref")
        public void put(ShelfRef ref, String item) {
        }
    }

    static class ShelfRepository {
        private final List<String> writes = new CopyOnWriteArrayList<>();

        @Fenced(resource = "shelves", key = "#holder")
        public void put(ShelfHolder holder, String item) {
            writes.add(item);
        }

        public List<String> writes() {
            return writes;
        }
    }

    static class ShelfService {
        private final ShelfRepository repository;

        ShelfService(ShelfRepository repository) {
            this.repository = repository;
        }

        @Fenced(resource = "shelves", key = "#holder", acquire = true)
        public void stock(ShelfHolder holder, String item) {
            repository.put(holder, item);
        }
    }

    @Configuration
    @EnableFencing(acquireTimeoutMillis = 500)
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer(Duration.ofSeconds(30), 32);
        }

        @Bean
        ShelfRepository shelfRepository() {
            return new ShelfRepository();
        }

        @Bean
        ShelfService shelfService(ShelfRepository repository) {
            return new ShelfService(repository);
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class SlotsConfig {
        @Bean
        SlotsRepository slotsRepository() {
            return new SlotsRepository();
        }
    }

    @AfterEach
    void clean() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    @Timeout(30)
    void aRecordParameterWithAnArrayComponentFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(SlotsConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("@Fenced key '#ref' on RecordKeyTextTest.SlotsRepository.put(ShelfRef, String)")
                .hasMessageContaining("a record whose component slots is an array")
                .hasMessageContaining("implement dev.fencing.annotation.FencingKey on ShelfRef");
    }

    /**
     * A shelf held in a record whose component has an identity text: the acquiring call is refused before it takes a
     * lock, and nothing is written; the same record over the shelf's id is fenced.
     */
    @Test
    @Timeout(30)
    void aRecordWhoseComponentValueHasAnIdentityTextIsRefusedPerCall() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            ShelfService service = context.getBean(ShelfService.class);
            ShelfRepository repository = context.getBean(ShelfRepository.class);
            assertThatThrownBy(() -> service.stock(new ShelfHolder(new Shelf(7)), "X"))
                    .isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("ShelfService.stock(ShelfHolder, String)")
                    .hasMessageContaining("a record whose component shelf (Shelf) is a class that does not override "
                            + "toString()");
            assertThat(context.getBean(InMemoryFenceStore.class).size()).isZero();
            service.stock(new ShelfHolder(7L), "Y");
            assertThat(repository.writes()).containsExactly("Y");
            assertThat(context.getBean(InMemoryFenceStore.class).maxSeen("shelves:ShelfHolder[shelf=7]")).isPresent();
        }
    }
}
