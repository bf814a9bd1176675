// src/commands/image/: the `pole-bench image` topic: building the docker runtime's images (the work is
// in src/image/).
//
// `pole-bench image build`: build (or find up to date) the node image the docker runtime runs.
import { targetImages } from '../../targets/registry.js';
import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import {
  buildImage,
  ImageBuildError,
  megabytes,
  seconds,
  type ImageBuildResult,
} from '../../image/image-build.js';

export default class ImageBuild extends CliCommand {
  static override summary =
    "Build the images of the container runtimes: the node image (POLE node, load agent, tc) and each target's own.";

  static override description =
    'By default FROM an offline Debian 12 base made with debootstrap from Debian packages and docker import ' +
    '(pole-bench-base:bookworm-<hash>, built once): no container registry is contacted. The image holds the ' +
    'compiled code, the production dependencies and the Node binary running this command. It is tagged ' +
    'pole-bench-node:<version> and labelled with a hash of its content: when nothing changed, nothing is built. ' +
    'Each target whose members are not the POLE node has an image of its own (pole-bench-<target>:<version>, ' +
    'its Debian packages: `pole-bench doctor` and docs/targets.md list them), built FROM the same base, once per base.';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> image build',
    '<%= config.bin %> image build --base-image debian:bookworm-slim',
    '<%= config.bin %> image build --json',
  ];

  static override flags = {
    'base-image': Flags.string({
      description:
        'build FROM this image instead of the offline Debian base (pulled if absent, unless --offline)',
    }),
    offline: Flags.boolean({
      description: 'never contact a container registry: a --base-image must already be local',
      default: false,
    }),
    tag: Flags.string({ description: 'image tag (default pole-bench-node:<package version>)' }),
    'node-binary': Flags.string({
      description: 'Node 20+ linux binary to put in the image (default: the one running this command)',
    }),
  };

  async run(): Promise<ImageBuildResult> {
    const { flags } = await this.parse(ImageBuild);
    // With --json, stdout is the result alone and progress goes to stderr (written directly:
    // oclif's logToStderr is silent under --json, and a build can take a minute).
    const progress = (line: string): void => {
      if (this.jsonEnabled()) process.stderr.write(`${line}\n`);
      else this.log(line);
    };
    let result: ImageBuildResult;
    try {
      result = await buildImage({
        ...(flags['base-image'] !== undefined ? { baseImage: flags['base-image'] } : {}),
        offline: flags.offline,
        ...(flags.tag !== undefined ? { tag: flags.tag } : {}),
        ...(flags['node-binary'] !== undefined ? { nodeBinary: flags['node-binary'] } : {}),
        progress,
        targetImages: targetImages(),
      });
    } catch (err) {
      if (err instanceof ImageBuildError) {
        if (err.tail.length > 0) process.stderr.write(err.tail.map((l) => `  | ${l}\n`).join(''));
        this.error(err.message, { exit: err.exitCode });
      }
      throw err;
    }
    progress(
      `${result.upToDate ? 'up to date' : 'built'}: ${result.tag} (${result.imageId.slice(7, 19)}), ` +
        `${megabytes(result.sizeBytes)}, ${seconds(result.totalMs)} in all`,
    );
    for (const own of targetImages().map((i) => result[i.target]))
      if (own)
        progress(
          `${own.upToDate ? 'up to date' : 'built'}: ${own.tag} (${own.imageId.slice(7, 19)}), ${megabytes(own.sizeBytes)}`,
        );
    return result;
  }
}
