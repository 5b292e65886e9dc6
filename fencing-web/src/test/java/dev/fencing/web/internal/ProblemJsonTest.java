package dev.fencing.web.internal;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The problem-detail reader keeps top-level members and gives up (null) on anything that is not one object. */
class ProblemJsonTest {

    @Test
    void readsTopLevelMembersAndSkipsNestedOnes() {
        Map<String, Object> members = ProblemJson.parse(" {\"type\":\"https://x/y\",\"status\":409,"
                + "\"detail\":\"a \\\"quoted\\\" \\u00e9 line\\n\",\"maxSeen\":34,\"ok\":true,\"none\":null,"
                + "\"nested\":{\"a\":[1,{\"b\":[]}],\"c\":\"d\"},\"list\":[\"x\",2]} ");
        assertThat(members).containsEntry("type", "https://x/y").containsEntry("status", new BigDecimal("409"))
                .containsEntry("detail", "a \"quoted\" \u00e9 line\n").containsEntry("maxSeen", new BigDecimal("34"))
                .containsEntry("ok", Boolean.TRUE).containsEntry("none", null)
                .containsEntry("nested", null).containsEntry("list", null).doesNotContainKey("a");
    }

    @Test
    void anythingButOneWellFormedObjectIsNull() {
        assertThat(ProblemJson.parse("")).isNull();
        assertThat(ProblemJson.parse("[1]")).isNull();
        assertThat(ProblemJson.parse("conflict")).isNull();
        assertThat(ProblemJson.parse("{\"a\":1")).isNull();
        assertThat(ProblemJson.parse("{\"a\":1} trailing")).isNull();
        assertThat(ProblemJson.parse("{\"a\":tru}")).isNull();
        assertThat(ProblemJson.parse("{\"a\":\"\\x\"}")).isNull();
        assertThat(ProblemJson.parse("{\"a\":" + "[".repeat(100) + "]".repeat(100) + "}")).isNull();
        assertThat(ProblemJson.parse("{}")).isEmpty();
    }
}
