package dev.fencing.web;

import dev.fencing.FencingConfigurationException;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

/**
 * {@link FencingTokenFilter#forUrlPatterns}: trusts the paths its patterns name, also where its registration carries no
 * patterns (MockMvc, which registers a filter by name and applies the patterns itself), and nowhere else.
 */
class UrlPatternFilterTest {

    private static final String TOKEN = new FencingToken("ledger", 7, "caller").toText();

    @RestController
    static class Echo {
        @GetMapping({"/internal/ledger", "/internal", "/public/ledger", "/reports/today.do"})
        String bound() {
            FencingToken token = FencingContext.current("ledger");
            return token == null ? "none" : Long.toString(token.value());
        }
    }

    @Test
    void mappedByMockMvcToItsPatternsItBindsTheCallersTokenThere() throws Exception {
        MockMvc mvc = MockMvcBuilders.standaloneSetup(new Echo())
                .addFilter(FencingTokenFilter.forUrlPatterns(List.of("/internal/*")), "/internal/*").build();
        assertThat(body(mvc, get("/internal/ledger").header(FencingHeader.NAME, TOKEN), 200)).isEqualTo("7");
        assertThat(body(mvc, get("/internal").header(FencingHeader.NAME, TOKEN), 200)).isEqualTo("7");
        assertThat(body(mvc, get("/internal/ledger"), 200)).isEqualTo("none");
    }

    @Test
    void seeingRequestsOutsideItsPatternsItTrustsNoHeaderThere() throws Exception {
        MockMvc mvc = MockMvcBuilders.standaloneSetup(new Echo())
                .addFilters(FencingTokenFilter.forUrlPatterns(List.of("/internal/*", "*.do"))).build();
        assertThat(body(mvc, get("/public/ledger").header(FencingHeader.NAME, TOKEN), 403))
                .contains(FencingTokenFilter.UNTRUSTED_TOKEN_TYPE);
        assertThat(body(mvc, get("/public/ledger"), 200)).isEqualTo("none");
        assertThat(body(mvc, get("/reports/today.do").header(FencingHeader.NAME, TOKEN), 200)).isEqualTo("7");
    }

    private static String body(MockMvc mvc, MockHttpServletRequestBuilder request, int status) throws Exception {
        MockHttpServletResponse response = mvc.perform(request).andReturn().getResponse();
        assertThat(response.getStatus()).isEqualTo(status);
        return response.getContentAsString();
    }

    @Test
    void patternsCoveringEveryRequestOrNoneOrNotServletPatternsAreRefused() {
        for (String pattern : new String[] {"/*", "/", "/internal/**", "internal/*"}) {
            assertThatThrownBy(() -> FencingTokenFilter.forUrlPatterns(List.of("/jobs/*", pattern)))
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("FencingTokenFilter.forUrlPatterns holds '" + pattern + "'");
        }
        assertThatThrownBy(() -> FencingTokenFilter.forUrlPatterns(List.of()))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("names no URL pattern");
    }
}
