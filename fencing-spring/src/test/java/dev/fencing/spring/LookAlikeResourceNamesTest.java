package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.text.Normalizer;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Resource names that look like one resource but are several fail startup, as the README promises, and not only when
 * they differ in letter case: a name typed with a decomposed accent (NFD, as macOS file names and some editors give
 * it) next to the composed one (NFC), a full-width letter, a name with a trailing space or with an invisible character
 * (a zero-width space, a no-break space). Each looks the same in code review, logs and metrics, and was a second lock
 * and max_seen for the same data, starting without complaint (a red-team review). Look-alike spellings are reported
 * together, naming both methods and both spellings (escaped, since they look the same); a name with whitespace at
 * either end or an invisible character is refused on its own.
 */
class LookAlikeResourceNamesTest {

    static final String NFC = Normalizer.normalize("caf\u00e9-orders", Normalizer.Form.NFC);
    static final String NFD = Normalizer.normalize("caf\u00e9-orders", Normalizer.Form.NFD);

    static class ComposedRepository {
        @Fenced(resource = "caf\u00e9-orders", key = "#id")
        public void write(long id) {
        }
    }

    static class DecomposedRepository {
        @Fenced(resource = "cafe\u0301-orders", key = "#id")
        public void write(long id) {
        }
    }

    static class SpacedRepository {
        @Fenced(resource = "caf\u00e9-orders ", key = "#id")
        public void write(long id) {
        }
    }

    static class ZeroWidthRepository {
        @Fenced(resource = "caf\u00e9\u200b-orders", key = "#id")
        public void write(long id) {
        }
    }

    static class NoBreakRepository {
        @Fenced(resource = "caf\u00e9\u00a0orders", acquire = true)
        public void write(long id) {
        }
    }

    static class FullWidthRepository {
        @Fenced(resource = "caf\u00e9-\uff4frders", key = "#id")
        public void write(long id) {
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class NormalizationConfig {
        @Bean
        ComposedRepository composed() {
            return new ComposedRepository();
        }

        @Bean
        DecomposedRepository decomposed() {
            return new DecomposedRepository();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class SpaceConfig {
        @Bean
        ComposedRepository composed() {
            return new ComposedRepository();
        }

        @Bean
        SpacedRepository spaced() {
            return new SpacedRepository();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class ZeroWidthConfig {
        @Bean
        ZeroWidthRepository zeroWidth() {
            return new ZeroWidthRepository();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class NoBreakConfig {
        @Bean
        NoBreakRepository noBreak() {
            return new NoBreakRepository();
        }
    }

    @Configuration
    @EnableFencing(allowInMemoryStore = true)
    static class FullWidthConfig {
        @Bean
        ComposedRepository composed() {
            return new ComposedRepository();
        }

        @Bean
        FullWidthRepository fullWidth() {
            return new FullWidthRepository();
        }
    }

    @Test
    @Timeout(30)
    void namesThatDifferInUnicodeNormalizationOnlyFailStartup() {
        org.assertj.core.api.Assertions.assertThat(NFC).isNotEqualTo(NFD);
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NormalizationConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("ComposedRepository.write").hasMessageContaining("DecomposedRepository.write")
                .hasMessageContaining("caf\\u00E9-orders").hasMessageContaining("cafe\\u0301-orders")
                .hasMessageContaining("look alike").hasMessageContaining("spell the resource the same way");
    }

    @Test
    @Timeout(30)
    void namesThatDifferInATrailingSpaceOnlyFailStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(SpaceConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("SpacedRepository.write").hasMessageContaining("'caf\u00e9-orders '")
                .hasMessageContaining("trailing whitespace").hasMessageContaining("remove the whitespace");
    }

    /** An invisible character is refused even without a second name to look like: the name alone is the mistake. */
    @Test
    @Timeout(30)
    void aNameWithAnInvisibleCharacterFailsStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(ZeroWidthConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("ZeroWidthRepository.write").hasMessageContaining("caf\u00e9\\u200B-orders")
                .hasMessageContaining("invisible character at index 4 (U+200B)");
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(NoBreakConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("NoBreakRepository.write").hasMessageContaining("(U+00A0)")
                .hasMessageContaining("write a plain space");
    }

    @Test
    @Timeout(30)
    void namesThatDifferInACompatibilityFormFailStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(FullWidthConfig.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("ComposedRepository.write").hasMessageContaining("FullWidthRepository.write")
                .hasMessageContaining("caf\\u00E9-\\uFF4Frders");
    }
}
