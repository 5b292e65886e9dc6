package dev.fencing.web;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * A header no filter admitted is refused with 403 either way; on a path the token filter is mapped to, the detail says
 * that the filter did not run (MockMvc with filters off), not that the path does not accept the header.
 */
class UnadmittedOnFilterPathTest {

    @RestController
    static class Handler {
        @PostMapping({"/internal/ledger", "/public/ledger"})
        String write() {
            return "written";
        }
    }

    private final MockMvc mvc = MockMvcBuilders.standaloneSetup(new Handler())
            .addInterceptors(new UnadmittedTokenInterceptor("this application accepts it only on /internal/*",
                    List.of("/internal/*"))).build();

    private MockHttpServletResponse send(String path) throws Exception {
        return mvc.perform(post(path).header(FencingHeader.NAME, new FencingToken("ledger", 3, "caller").toText()))
                .andReturn().getResponse();
    }

    @Test
    void onTheFiltersPathItSaysTheFilterDidNotRun() throws Exception {
        MockHttpServletResponse response = send("/internal/ledger");
        assertThat(response.getStatus()).isEqualTo(403);
        assertThat(response.getContentAsString()).contains("no token filter ran for this request")
                .contains("addFilters = false").doesNotContain("not accepted on this path");
    }

    /**
     * An error dispatch renders the answer another filter chose (Spring Security's 401 for a caller whose credentials
     * failed, sent with its header): it is not refused again as an untrusted header.
     */
    @Test
    void anErrorDispatchIsLeftToTheAnswerItRenders() throws Exception {
        MockHttpServletResponse response = mvc.perform(post("/public/ledger")
                .header(FencingHeader.NAME, new FencingToken("ledger", 3, "caller").toText())
                .with(request -> {
                    request.setDispatcherType(jakarta.servlet.DispatcherType.ERROR);
                    return request;
                })).andReturn().getResponse();
        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getContentAsString()).isEqualTo("written");
    }

    @Test
    void elsewhereItSaysThePathDoesNotAcceptIt() throws Exception {
        MockHttpServletResponse response = send("/public/ledger");
        assertThat(response.getStatus()).isEqualTo(403);
        assertThat(response.getContentAsString()).contains("not accepted on this path")
                .contains("only on /internal/*");
    }
}
