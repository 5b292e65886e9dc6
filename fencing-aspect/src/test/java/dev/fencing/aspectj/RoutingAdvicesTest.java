package dev.fencing.aspectj;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The routing advices in {@code FencingAspect.aj} are what {@link RoutingAdvices} writes, so the copies per return
 * type and parameter count cannot drift apart. Run with {@code -Dfencing.aspect.update=true} to rewrite them.
 */
class RoutingAdvicesTest {

    private static final Path ASPECT = Path.of("src/main/java/dev/fencing/aspectj/FencingAspect.aj");

    private static final boolean UPDATE = Boolean.getBoolean("fencing.aspect.update");

    @Test
    @Timeout(10)
    void theArgumentFreeAdvicesAreTheGeneratedOnes() throws IOException {
        assertRegion("argument-free", RoutingAdvices::argumentFree);
    }

    @Test
    @Timeout(10)
    void theKeyedAdvicesAreTheGeneratedOnes() throws IOException {
        assertRegion("keyed", RoutingAdvices::keyed);
    }

    @Test
    @Timeout(10)
    void everyKeyedGroupOfUpToTwelveParametersHasAnAdvicePerPrimitiveReturnType() {
        String keyed = RoutingAdvices.keyed();
        for (String group : new String[] {"keyed1(a0)", "keyed4(a0, a1, a2, a3)", "keyed6(a0, a1, a2, a3, a4, a5)",
                "keyedMore(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)"}) {
            for (String type : new String[] {"int", "long", "float", "double"}) {
                assertThat(keyed).contains(group + " && execution(" + type + " *(..)) {");
            }
            assertThat(keyed).contains(group + " && returnsOther() {");
        }
        assertThat(keyed.lines()).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(120));
    }

    private static void assertRegion(String name, Supplier<String> render) throws IOException {
        String start = "    // <routing-advices " + name + ">\n";
        String end = "    // </routing-advices " + name + ">\n";
        String source = Files.readString(ASPECT, StandardCharsets.UTF_8);
        int from = source.indexOf(start);
        int to = source.indexOf(end);
        assertThat(from).as("the start marker of the %s advices in %s", name, ASPECT).isNotNegative();
        assertThat(to).as("the end marker of the %s advices in %s", name, ASPECT).isGreaterThan(from);
        String expected = render.get();
        String actual = source.substring(from + start.length(), to);
        if (UPDATE && !actual.equals(expected)) {
            Files.writeString(ASPECT, source.substring(0, from + start.length()) + expected + source.substring(to),
                    StandardCharsets.UTF_8);
            return;
        }
        assertThat(actual).as("the %s routing advices of %s, as RoutingAdvices writes them (rewrite them with "
                + "-Dfencing.aspect.update=true)", name, ASPECT).isEqualTo(expected);
    }
}
