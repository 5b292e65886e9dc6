package dev.fencing.it.boot.testing;

import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.servlet.MockMvc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * The whole application under MockMvc, with the token filter on {@code /internal/*}: it starts (MockMvc registers
 * filters without their URL patterns, which a filter reading its registration took for "mapped to everything"), and
 * the fence answers through it as on a server: a newer token writes, an older one is 409, none is 428.
 */
@SpringBootTest(properties = {"fencing.web.filter.url-patterns=/internal/*",
        "spring.sql.init.schema-locations=classpath:testing/schema.sql",
        "spring.datasource.url=jdbc:h2:mem:mockmvc-application;DB_CLOSE_DELAY=-1"})
@AutoConfigureMockMvc
@DirtiesContext
class MockMvcApplicationTest {

    @Autowired
    MockMvc mvc;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void theFilterBindsTheCallersTokenAndTheFenceAnswersThroughIt() throws Exception {
        jdbc.update("INSERT INTO tested_wallet (id, balance) VALUES (7, 0)");
        assertThat(deposit(new FencingToken("wallets:7", 5, "caller"))).isEqualTo(200);
        assertThat(deposit(new FencingToken("wallets:7", 4, "zombie"))).isEqualTo(409);
        assertThat(deposit(null)).isEqualTo(428);
        assertThat(jdbc.queryForObject("SELECT balance FROM tested_wallet WHERE id = 7", Long.class)).isEqualTo(10);
    }

    private int deposit(FencingToken token) throws Exception {
        var request = post("/internal/wallets/7/deposits/10");
        if (token != null) {
            request.header(FencingHeader.NAME, token.toText());
        }
        return mvc.perform(request).andReturn().getResponse().getStatus();
    }
}
