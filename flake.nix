{
  description = "Arbiter: decision runs, a model router, API keys, usage, quota and billing over one HTTP JSON API";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = import nixpkgs { inherit system; };
        nodejs = pkgs.nodejs_20;

        # The service, built from package-lock.json (importNpmLock reads the lockfile's resolved URLs and
        # integrity hashes, so no separate dependency hash is kept in this file).
        arbiter = pkgs.buildNpmPackage {
          pname = "arbiter";
          version = "0.1.0";
          src = pkgs.lib.cleanSourceWith {
            src = ./.;
            filter = path: type:
              !(builtins.elem (baseNameOf path) [ "node_modules" ".data" "result" "scratch" ]);
          };
          inherit nodejs;
          npmDeps = pkgs.importNpmLock { npmRoot = ./.; };
          npmConfigHook = pkgs.importNpmLock.npmConfigHook;
          npmBuildScript = "typecheck";
          installPhase = ''
            runHook preInstall
            mkdir -p $out/lib/arbiter $out/bin
            cp -r package.json package-lock.json node_modules schema src migrations data $out/lib/arbiter/
            # tsx is imported by absolute path: the wrappers run from the caller's directory, so DATA_DIR's
            # default (./.data) and relative paths mean what the operator expects.
            makeWrapper ${nodejs}/bin/node $out/bin/arbiter \
              --add-flags "--import $out/lib/arbiter/node_modules/tsx/dist/loader.mjs $out/lib/arbiter/src/cli.ts"
            makeWrapper ${nodejs}/bin/node $out/bin/arbiter-server \
              --add-flags "--import $out/lib/arbiter/node_modules/tsx/dist/loader.mjs $out/lib/arbiter/src/main.ts"
            runHook postInstall
          '';
          nativeBuildInputs = [ pkgs.makeWrapper ];
          meta.mainProgram = "arbiter-server";
        };
      in
      {
        packages.default = arbiter;

        # An OCI image: docker load < result; docker run -e DATABASE_URL=... -p 8080:8080 arbiter:0.1.0
        packages.image = pkgs.dockerTools.buildLayeredImage {
          name = "arbiter";
          tag = "0.1.0";
          contents = [ arbiter pkgs.cacert ];
          config = {
            Cmd = [ "${arbiter}/bin/arbiter-server" ];
            Env = [ "HOST=0.0.0.0" "PORT=8080" "DATA_DIR=/var/lib/arbiter" ];
            ExposedPorts = { "8080/tcp" = { }; };
          };
        };

        apps.default = {
          type = "app";
          program = "${arbiter}/bin/arbiter-server";
        };

        devShells.default = pkgs.mkShell {
          packages = [ nodejs pkgs.postgresql_15 ];
          shellHook = ''
            echo "node $(node --version), $(postgres --version)"
          '';
        };
      });
}
